package dev.parapet.core.time;

import org.jspecify.annotations.Nullable;

/**
 * HTTP-date (RFC 9110 §5.6.7) for {@code Date}, {@code Expires} and {@code Last-Modified}: parses
 * the three forms a recipient must accept and formats IMF-fixdate, without allocating while
 * parsing.
 *
 * <p>The one HTTP-date parser of Parapet: {@code Retry-After} (core) and the cache (proxy) both use
 * it. Hand-written because {@code java.time}'s {@code RFC_1123_DATE_TIME} allocates, accepts more
 * than the grammar and knows neither RFC 850 nor asctime. The rules: IMF-fixdate {@code Sun, 06 Nov
 * 1994 08:49:37 GMT}, RFC 850 {@code Sunday, 06-Nov-94 08:49:37 GMT} (a two-digit year more than 50
 * years ahead means the previous century, RFC 9110 §5.6.7) and asctime {@code Sun Nov 6 08:49:37
 * 1994}; anything else is {@link #INVALID}. The grammar is case-sensitive ({@link #parse}); the
 * cache uses {@link #parseAnyCase}, as RFC 9111 §4.2 asks of caches.
 */
public final class HttpDate {
  /** Returned for a value that is not an HTTP-date. */
  public static final long INVALID = Long.MIN_VALUE;

  private static final long MILLIS_PER_DAY = 86_400_000L;
  private static final String MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";
  private static final String DAYS = "MonTueWedThuFriSatSun";
  private static final String[] LONG_DAYS = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"
  };

  private HttpDate() {}

  /**
   * Epoch millis of an HTTP-date, or {@link #INVALID}.
   *
   * @param nowEpochMillis wall-clock time, used only to place RFC 850's two-digit year
   */
  public static long parse(@Nullable CharSequence s, long nowEpochMillis) {
    return parse(s, nowEpochMillis, false);
  }

  /**
   * As {@link #parse(CharSequence, long)}, with day names, month names and {@code GMT} matched
   * case-insensitively, as RFC 9111 §4.2 asks of a cache ("although all date formats are specified
   * to be case-sensitive, a cache recipient SHOULD match the field value case-insensitively").
   */
  public static long parseAnyCase(@Nullable CharSequence s, long nowEpochMillis) {
    return parse(s, nowEpochMillis, true);
  }

  private static long parse(@Nullable CharSequence s, long nowEpochMillis, boolean anyCase) {
    if (s == null) {
      return INVALID;
    }
    int from = 0;
    int to = s.length();
    while (from < to && (s.charAt(from) == ' ' || s.charAt(from) == '\t')) {
      from++;
    }
    while (to > from && (s.charAt(to - 1) == ' ' || s.charAt(to - 1) == '\t')) {
      to--;
    }
    return parse(s, from, to, nowEpochMillis, anyCase);
  }

  /**
   * Epoch millis of an HTTP-date in {@code s[from, to)} (no surrounding whitespace), or {@link
   * #INVALID}; allocation-free.
   */
  public static long parse(CharSequence s, int from, int to, long nowEpochMillis) {
    return parse(s, from, to, nowEpochMillis, false);
  }

  private static long parse(
      CharSequence s, int from, int to, long nowEpochMillis, boolean anyCase) {
    int len = to - from;
    if (len == 29 && s.charAt(from + 3) == ',') {
      // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
      if (dayName(s, from, anyCase) < 0
          || s.charAt(from + 4) != ' '
          || s.charAt(from + 7) != ' '
          || s.charAt(from + 11) != ' '
          || s.charAt(from + 16) != ' '
          || !literal(s, from + 25, " GMT", anyCase)) {
        return INVALID;
      }
      return millis(
          digits(s, from + 12, 4),
          month(s, from + 8, anyCase),
          digits(s, from + 5, 2),
          time(s, from + 17));
    }
    if (len == 24 && s.charAt(from + 3) == ' ') {
      // asctime: Sun Nov  6 08:49:37 1994
      if (dayName(s, from, anyCase) < 0
          || s.charAt(from + 7) != ' '
          || s.charAt(from + 10) != ' '
          || s.charAt(from + 19) != ' ') {
        return INVALID;
      }
      int day = s.charAt(from + 8) == ' ' ? digits(s, from + 9, 1) : digits(s, from + 8, 2);
      return millis(digits(s, from + 20, 4), month(s, from + 4, anyCase), day, time(s, from + 11));
    }
    for (String longDay : LONG_DAYS) {
      // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
      int n = longDay.length();
      if (len == n + 24
          && literal(s, from, longDay, anyCase)
          && literal(s, from + n, ", ", anyCase)) {
        int p = from + n + 2;
        if (s.charAt(p + 2) != '-'
            || s.charAt(p + 6) != '-'
            || s.charAt(p + 9) != ' '
            || !literal(s, p + 18, " GMT", anyCase)) {
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
        return millis(year, month(s, p + 3, anyCase), digits(s, p, 2), time(s, p + 10));
      }
    }
    return INVALID;
  }

  /** IMF-fixdate of epoch millis (seconds truncated toward the past), e.g. for an added Date. */
  public static String format(long epochMillis) {
    long epochSecond = Math.floorDiv(epochMillis, 1000L);
    long day = Math.floorDiv(epochSecond, 86_400L);
    int secondOfDay = (int) Math.floorMod(epochSecond, 86_400L);
    // civil_from_days (H. Hinnant)
    long z = day + 719_468;
    long era = Math.floorDiv(z, 146_097);
    long doe = z - era * 146_097;
    long yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    int dayOfMonth = (int) (doy - (153 * mp + 2) / 5 + 1);
    int month = (int) (mp < 10 ? mp + 3 : mp - 9);
    long year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    int weekday = (int) Math.floorMod(day + 3, 7L); // 1970-01-01 was a Thursday (index 3)
    StringBuilder b = new StringBuilder(29);
    b.append(DAYS, weekday * 3, weekday * 3 + 3).append(", ");
    two(b, dayOfMonth).append(' ');
    b.append(MONTHS, (month - 1) * 3, month * 3).append(' ');
    for (long pad = 1000; pad > 1 && year < pad; pad /= 10) {
      b.append('0'); // IMF-fixdate's year is exactly four digits
    }
    b.append(year).append(' ');
    two(b, secondOfDay / 3600).append(':');
    two(b, secondOfDay / 60 % 60).append(':');
    two(b, secondOfDay % 60).append(" GMT");
    return b.toString();
  }

  private static StringBuilder two(StringBuilder b, int v) {
    return b.append((char) ('0' + v / 10)).append((char) ('0' + v % 10));
  }

  private static long millis(int year, int month, int day, int secondOfDay) {
    if (year < 0 || month < 1 || day < 1 || secondOfDay < 0 || day > daysInMonth(year, month)) {
      return INVALID;
    }
    return daysFromCivil(year, month, day) * MILLIS_PER_DAY + secondOfDay * 1000L;
  }

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
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }

  private static int month(CharSequence s, int p, boolean anyCase) {
    return indexOf3(MONTHS, s, p, anyCase) + 1;
  }

  private static int dayName(CharSequence s, int p, boolean anyCase) {
    return indexOf3(DAYS, s, p, anyCase);
  }

  private static int indexOf3(String table, CharSequence s, int p, boolean anyCase) {
    for (int i = 0; i < table.length(); i += 3) {
      if (same(table.charAt(i), s.charAt(p), anyCase)
          && same(table.charAt(i + 1), s.charAt(p + 1), anyCase)
          && same(table.charAt(i + 2), s.charAt(p + 2), anyCase)) {
        return i / 3;
      }
    }
    return -1;
  }

  private static boolean literal(CharSequence s, int p, String expected, boolean anyCase) {
    for (int i = 0; i < expected.length(); i++) {
      if (!same(expected.charAt(i), s.charAt(p + i), anyCase)) {
        return false;
      }
    }
    return true;
  }

  /** Equal, or with {@code anyCase} the same ASCII letter in the other case. */
  private static boolean same(char expected, char c, boolean anyCase) {
    return expected == c || (anyCase && Character.isLetter(expected) && (expected ^ 0x20) == c);
  }

  private static int daysInMonth(int year, int month) {
    return switch (month) {
      case 2 -> (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28;
      case 4, 6, 9, 11 -> 30;
      default -> 31;
    };
  }

  static long daysFromCivil(int year, int month, int day) {
    long y = month <= 2 ? year - 1 : year;
    long era = Math.floorDiv(y, 400);
    long yoe = y - era * 400;
    long doy = (153L * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146_097 + doe - 719_468;
  }

  static int yearOf(long epochDay) {
    long z = epochDay + 719_468;
    long era = Math.floorDiv(z, 146_097);
    long doe = z - era * 146_097;
    long yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    return (int) (yoe + era * 400 + (mp >= 10 ? 1 : 0));
  }
}
