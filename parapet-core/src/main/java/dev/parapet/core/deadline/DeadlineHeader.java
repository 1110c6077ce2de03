package dev.parapet.core.deadline;

import org.jspecify.annotations.Nullable;

/**
 * The {@code Parapet-Deadline} request header: the milliseconds the sending tier will still wait,
 * as a non-negative decimal integer ({@code Parapet-Deadline: 4950}).
 *
 * <p>Decoding is defensive, because the header comes from the network:
 *
 * <ul>
 *   <li>absent, empty, a sign ({@code -5}, {@code +5}), a fraction, a list ({@code 10, 20}), any
 *       non-digit, or more than {@link #MAX_LENGTH} characters: {@link #ABSENT}. The route timeout
 *       then applies unchanged — garbage can neither shorten (a free 504 for anyone) nor lengthen
 *       the budget. A negative value is malformed by this grammar, so it is ignored like the rest.
 *   <li>a well-formed value above {@link #MAX_MILLIS} (one day): clamped to it. Since the budget is
 *       {@code min(route timeout, header)}, a large value is harmless either way.
 *   <li>leading zeros are accepted; surrounding spaces and tabs are ignored.
 * </ul>
 *
 * <p>Encoding rounds down, so the next tier is never promised more time than this one has left.
 */
public final class DeadlineHeader {
  /** The header name. */
  public static final String NAME = "Parapet-Deadline";

  /** Returned by {@link #parseMillis} when the header is absent or malformed. */
  public static final long ABSENT = -1L;

  /** Largest value honoured, in milliseconds (one day); larger ones are clamped. */
  public static final long MAX_MILLIS = 86_400_000L;

  /** Longest header value read at all; longer ones are ignored without being scanned. */
  public static final int MAX_LENGTH = 32;

  private DeadlineHeader() {}

  /** The remaining milliseconds carried by {@code value}, or {@link #ABSENT}; allocation-free. */
  public static long parseMillis(@Nullable CharSequence value) {
    if (value == null || value.length() > MAX_LENGTH) {
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
    long millis = 0;
    for (int i = from; i < to; i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') {
        return ABSENT;
      }
      millis = Math.min(MAX_MILLIS, millis * 10 + (c - '0'));
    }
    return millis;
  }

  /** The budget in nanoseconds carried by {@code value}, or {@link #ABSENT}. */
  public static long parseNanos(@Nullable CharSequence value) {
    long millis = parseMillis(value);
    return millis == ABSENT ? ABSENT : millis * 1_000_000L;
  }

  /** The header value for {@code remainingNanos}: whole milliseconds, rounded down, at least 0. */
  public static long toMillis(long remainingNanos) {
    return Math.min(MAX_MILLIS, Math.max(0L, remainingNanos / 1_000_000L));
  }

  /** The header value for {@code remainingNanos} as text. */
  public static String format(long remainingNanos) {
    return Long.toString(toMillis(remainingNanos));
  }

  private static boolean isWhitespace(char c) {
    return c == ' ' || c == '\t';
  }
}
