package dev.parapet.core.retry;

import org.jspecify.annotations.Nullable;

/**
 * Parses an upstream {@code Retry-After} header (RFC 9110 §10.2.3) into a delay, without
 * allocating.
 *
 * <p>Accepted forms: {@code delay-seconds} (one or more digits) and {@code HTTP-date} in all three
 * forms a recipient must accept (RFC 9110 §5.6.7): IMF-fixdate {@code Sun, 06 Nov 1994 08:49:37
 * GMT}, the obsolete RFC 850 form {@code Sunday, 06-Nov-94 08:49:37 GMT} (a two-digit year more
 * than 50 years ahead means the previous century) and asctime {@code Sun Nov 6 08:49:37 1994}.
 * Leading and trailing spaces or tabs are ignored.
 *
 * <p>Safety rules: anything else (empty, a sign, a fraction, trailing text, an impossible date) is
 * {@link #ABSENT} — a malformed hint is no hint; a negative value ({@code -5}) is absent too; a
 * date in the past means "now" (0); values beyond {@link #MAX_SECONDS} (however many digits) are
 * clamped to it. Whether such a delay fits the request's deadline is {@link RetryPolicy}'s concern.
 */
public final class RetryAfter {
  /** Returned when the header is missing or unusable. */
  public static final long ABSENT = -1L;

  /** Longest delay honoured: one day. Larger values are clamped to this. */
  public static final long MAX_SECONDS = 86_400L;

  private static final long NANOS_PER_SECOND = 1_000_000_000L;
  private static final long MILLIS_PER_DAY = 86_400_000L;
  private static final String MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";
  private static final String DAYS = "MonTueWedThuFriSatSun";
  private static final String[] LONG_DAYS = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"
  };
  private static final long INVALID = Long.MIN_VALUE;

  private RetryAfter() {}

  /**
   * Returns the delay asked for, in nanoseconds in {@code [0, MAX_SECONDS s]}, or {@link #ABSENT}.
   *
   * @param value the header value, or {@code null} when the response had none
   * @param nowEpochMillis the wall-clock time, for the HTTP-date form only
   */
  public static long parseNanos(@Nullable CharSequence value, long nowEpochMillis) {
    if (value == null) {
      return ABSENT;
    }
    int from = 0;
    int to = value.length();
    while (from < to && isWhitespace(value.charAt(from))) {
      from++;
    }
    while (to > from && isWhitespace(value.charAt(to - 1))) {
      to--;
    }
    if (from == to) {
      return ABSENT;
    }
    if (isDigit(value.charAt(from))) {
      long seconds = 0;
      for (int i = from; i < to; i++) {
        char c = value.charAt(i);
        if (!isDigit(c)) {
          return ABSENT;
        }
        seconds = Math.min(MAX_SECONDS, seconds * 10 + (c - '0'));
      }
      return seconds * NANOS_PER_SECOND;
    }
    long dateMillis = parseHttpDateMillis(value, from, to, nowEpochMillis);
    if (dateMillis == INVALID) {
      return ABSENT;
    }
    long delayMillis = Math.max(0L, dateMillis - nowEpochMillis);
    return Math.min(delayMillis, MAX_SECONDS * 1000L) * 1_000_000L;
  }

  /** Epoch millis of an HTTP-date in {@code s[from, to)}, or {@link #INVALID}. */
  static long parseHttpDateMillis(CharSequence s, int from, int to, long nowEpochMillis) {
    int len = to - from;
    if (len == 29 && s.charAt(from + 3) == ',') {
      // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
      if (dayName(s, from) < 0
          || !literal(s, from + 3, ", ")
          || s.charAt(from + 7) != ' '
          || s.charAt(from + 11) != ' '
          || s.charAt(from + 16) != ' '
          || !literal(s, from + 25, " GMT")) {
        return INVALID;
      }
      return toEpochMillis(
          digits(s, from + 12, 4), month(s, from + 8), digits(s, from + 5, 2), time(s, from + 17));
    }
    if (len == 24 && s.charAt(from + 3) == ' ') {
      // asctime: Sun Nov  6 08:49:37 1994
      if (dayName(s, from) < 0
          || s.charAt(from + 7) != ' '
          || s.charAt(from + 10) != ' '
          || s.charAt(from + 19) != ' ') {
        return INVALID;
      }
      int day = s.charAt(from + 8) == ' ' ? digits(s, from + 9, 1) : digits(s, from + 8, 2);
      return toEpochMillis(digits(s, from + 20, 4), month(s, from + 4), day, time(s, from + 11));
    }
    // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
    for (String longDay : LONG_DAYS) {
      int n = longDay.length();
      if (len == n + 24 && literal(s, from, longDay) && literal(s, from + n, ", ")) {
        int p = from + n + 2;
        if (s.charAt(p + 2) != '-'
            || s.charAt(p + 6) != '-'
            || s.charAt(p + 9) != ' '
            || !literal(s, p + 18, " GMT")) {
          return INVALID;
        }
        int yy = digits(s, p + 7, 2);
        if (yy < 0) {
          return INVALID;
        }
        int nowYear = yearOf(Math.floorDiv(nowEpochMillis, MILLIS_PER_DAY));
        int year = nowYear - Math.floorMod(nowYear, 100) + yy;
        if (year > nowYear + 50) {
          year -= 100;
        }
        return toEpochMillis(year, month(s, p + 3), digits(s, p, 2), time(s, p + 10));
      }
    }
    return INVALID;
  }

  private static long toEpochMillis(int year, int month, int day, int secondOfDay) {
    if (year < 0 || month < 1 || day < 1 || secondOfDay < 0 || day > daysInMonth(year, month)) {
      return INVALID;
    }
    return daysFromCivil(year, month, day) * MILLIS_PER_DAY + secondOfDay * 1000L;
  }

  /** HH:MM:SS as seconds of the day, or -1. Second 60 (a leap second) is accepted. */
  private static int time(CharSequence s, int p) {
    if (s.charAt(p + 2) != ':' || s.charAt(p + 5) != ':') {
      return -1;
    }
    int h = digits(s, p, 2);
    int m = digits(s, p + 3, 2);
    int sec = digits(s, p + 6, 2);
    if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 60) {
      return -1;
    }
    return h * 3600 + m * 60 + sec;
  }

  private static int digits(CharSequence s, int p, int n) {
    int v = 0;
    for (int i = p; i < p + n; i++) {
      char c = s.charAt(i);
      if (!isDigit(c)) {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }

  private static int month(CharSequence s, int p) {
    return indexOf3(MONTHS, s, p) + 1; // 0 when unknown
  }

  private static int dayName(CharSequence s, int p) {
    return indexOf3(DAYS, s, p);
  }

  private static int indexOf3(String table, CharSequence s, int p) {
    for (int i = 0; i < table.length(); i += 3) {
      if (table.charAt(i) == s.charAt(p)
          && table.charAt(i + 1) == s.charAt(p + 1)
          && table.charAt(i + 2) == s.charAt(p + 2)) {
        return i / 3;
      }
    }
    return -1;
  }

  private static boolean literal(CharSequence s, int p, String expected) {
    for (int i = 0; i < expected.length(); i++) {
      if (s.charAt(p + i) != expected.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  private static int daysInMonth(int year, int month) {
    return switch (month) {
      case 2 -> (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28;
      case 4, 6, 9, 11 -> 30;
      default -> 31;
    };
  }

  /** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
  static long daysFromCivil(int year, int month, int day) {
    long y = month <= 2 ? year - 1 : year;
    long era = Math.floorDiv(y, 400);
    long yoe = y - era * 400;
    long doy = (153L * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146_097 + doe - 719_468;
  }

  /** The Gregorian year of a day count since 1970-01-01 (H. Hinnant's civil_from_days). */
  static int yearOf(long epochDay) {
    long z = epochDay + 719_468;
    long era = Math.floorDiv(z, 146_097);
    long doe = z - era * 146_097;
    long yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    long year = yoe + era * 400 + (mp >= 10 ? 1 : 0);
    return (int) year;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static boolean isWhitespace(char c) {
    return c == ' ' || c == '\t';
  }
}
