package dev.parapet.core.retry;

import dev.parapet.core.time.HttpDate;
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
    long dateMillis = HttpDate.parse(value, from, to, nowEpochMillis);
    if (dateMillis == HttpDate.INVALID) {
      return ABSENT;
    }
    long delayMillis = Math.max(0L, dateMillis - nowEpochMillis);
    return Math.min(delayMillis, MAX_SECONDS * 1000L) * 1_000_000L;
  }

  private static boolean isWhitespace(char c) {
    return c == ' ' || c == '\t';
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
