package dev.parapet.sim.replay;

import java.nio.charset.StandardCharsets;

/**
 * Numbers and times read in place from a byte slice {@code [from, to)}: no String, no boxing, no
 * {@code Double.parseDouble}. Decimal fractions are exact (digits scaled to nanoseconds), so the
 * same log gives the same nanoseconds on every run and in every format.
 */
final class Scan {
  static final long NANOS_PER_SECOND = 1_000_000_000L;
  private static final long MAX_SECONDS = 9_000_000_000L; // year 2255; keeps nanos in a long

  private Scan() {}

  static String text(byte[] b, int from, int to) {
    return new String(b, from, Math.max(0, to - from), StandardCharsets.UTF_8);
  }

  /** A non-negative integer, digits only. */
  static long digits(byte[] b, int from, int to, String what) {
    if (from >= to || to - from > 18) {
      throw bad(what, b, from, to, "digits");
    }
    long v = 0;
    for (int i = from; i < to; i++) {
      int d = b[i] - '0';
      if (d < 0 || d > 9) {
        throw bad(what, b, from, to, "digits");
      }
      v = v * 10 + d;
    }
    return v;
  }

  /**
   * A non-negative decimal ({@code 12}, {@code 12.5}) times {@code unitNanos}: {@code "1.5"} with a
   * unit of a millisecond is 1,500,000 ns. Digits past the nanosecond are dropped.
   */
  static long decimal(byte[] b, int from, int to, long unitNanos, String what) {
    // one pass: whole digits, then at most one point and its digits, scaled to the unit
    long whole = 0;
    int i = from;
    while (i < to) {
      int d = b[i] - '0';
      if (d < 0 || d > 9) {
        break;
      }
      whole = whole * 10 + d;
      i++;
    }
    int wholeDigits = i - from;
    if (wholeDigits > 18 || whole > Long.MAX_VALUE / unitNanos) {
      throw bad(what, b, from, to, "a smaller number");
    }
    long v = whole * unitNanos;
    if (i == to) {
      if (wholeDigits == 0) {
        throw bad(what, b, from, to, "digits");
      }
      return v;
    }
    if (b[i] != '.' || i + 1 >= to) {
      throw bad(what, b, from, to, wholeDigits == 0 ? "digits" : "a decimal number");
    }
    long scale = unitNanos;
    for (i++; i < to; i++) {
      int d = b[i] - '0';
      if (d < 0 || d > 9) {
        throw bad(what, b, from, to, "a decimal number");
      }
      if (scale >= 10) {
        scale /= 10;
        v += d * scale;
      }
    }
    return v;
  }

  /**
   * A time as epoch nanoseconds: epoch seconds with an optional fraction (a value above 10^11 is
   * read as milliseconds), or an ISO-8601 instant.
   */
  static long time(byte[] b, int from, int to) {
    if (to - from >= 10 && b[from + 4] == '-') {
      return iso(b, from, to);
    }
    int i = from;
    long whole = 0;
    while (i < to && b[i] >= '0' && b[i] <= '9' && i - from < 18) {
      whole = whole * 10 + (b[i] - '0');
      i++;
    }
    if (whole > 100_000_000_000L) {
      return decimal(b, from, to, 1_000_000L, "time");
    }
    if (i == from || whole > MAX_SECONDS) {
      throw bad("time", b, from, to, "epoch seconds or an ISO-8601 instant");
    }
    return decimal(b, from, to, NANOS_PER_SECOND, "time");
  }

  /** {@code 2025-12-01T08:00:00[.fff…](Z|±hh:mm|±hhmm)}. */
  static long iso(byte[] b, int from, int to) {
    try {
      if (to - from < 20
          || b[from + 4] != '-'
          || b[from + 7] != '-'
          || (b[from + 10] != 'T' && b[from + 10] != ' ')
          || b[from + 13] != ':'
          || b[from + 16] != ':') {
        throw bad("time", b, from, to, "epoch seconds or an ISO-8601 instant");
      }
      int year = (int) digits(b, from, from + 4, "time");
      int month = (int) digits(b, from + 5, from + 7, "time");
      int day = (int) digits(b, from + 8, from + 10, "time");
      int hour = (int) digits(b, from + 11, from + 13, "time");
      int minute = (int) digits(b, from + 14, from + 16, "time");
      int second = (int) digits(b, from + 17, from + 19, "time");
      int i = from + 19;
      long nanos = 0;
      if (i < to && (b[i] == '.' || b[i] == ',')) {
        long scale = NANOS_PER_SECOND;
        i++;
        int digitsStart = i;
        while (i < to && b[i] >= '0' && b[i] <= '9') {
          if (scale >= 10) {
            scale /= 10;
            nanos += (b[i] - '0') * scale;
          }
          i++;
        }
        if (i == digitsStart) {
          throw bad("time", b, from, to, "digits after the point");
        }
      }
      long offsetSeconds = offset(b, i, to, from);
      return instant(year, month, day, hour, minute, second, b, from, to) * NANOS_PER_SECOND
          - offsetSeconds * NANOS_PER_SECOND
          + nanos;
    } catch (ArrayIndexOutOfBoundsException e) {
      throw bad("time", b, from, to, "an ISO-8601 instant");
    }
  }

  /** {@code Z}, {@code ±hh:mm} or {@code ±hhmm} at {@code [i, to)}, in seconds east of UTC. */
  static long offset(byte[] b, int i, int to, int lineFrom) {
    if (i == to - 1 && (b[i] == 'Z' || b[i] == 'z')) {
      return 0;
    }
    if (i < to && (b[i] == '+' || b[i] == '-')) {
      int sign = b[i] == '-' ? -1 : 1;
      int h;
      int m;
      if (to - i == 6 && b[i + 3] == ':') {
        h = (int) digits(b, i + 1, i + 3, "time");
        m = (int) digits(b, i + 4, i + 6, "time");
      } else if (to - i == 5) {
        h = (int) digits(b, i + 1, i + 3, "time");
        m = (int) digits(b, i + 3, i + 5, "time");
      } else {
        throw bad("time", b, lineFrom, to, "a zone offset Z, +hh:mm or +hhmm");
      }
      return sign * (h * 3600L + m * 60L);
    }
    throw bad("time", b, lineFrom, to, "a zone offset Z, +hh:mm or +hhmm");
  }

  /** Seconds since the epoch of a UTC civil time (Howard Hinnant's days_from_civil). */
  static long instant(
      int year, int month, int day, int hour, int minute, int second, byte[] b, int from, int to) {
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
      throw bad("time", b, from, to, "a valid date and time");
    }
    int y = month <= 2 ? year - 1 : year;
    long era = Math.floorDiv(y, 400);
    long yoe = y - era * 400;
    long doy = (153L * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    long days = era * 146_097 + doe - 719_468;
    return days * 86_400 + hour * 3600L + minute * 60L + second;
  }

  static BadLineException bad(String what, byte[] b, int from, int to, String expected) {
    String found = to - from > 64 ? text(b, from, from + 64) + "…" : text(b, from, to);
    return new BadLineException(
        what + " : " + (found.isEmpty() ? "empty" : found) + " (expected: " + expected + ")");
  }
}
