package dev.parapet.core.time;

import java.time.Duration;

/** Small checks for durations given to policies; messages say what, expected and found. */
public final class Durations {
  private Durations() {}

  /** Returns {@code d} in nanoseconds after checking it is strictly positive. */
  public static long positiveNanos(String name, Duration d) {
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " : " + d + " (expected: > 0)");
    }
    return saturatedNanos(d);
  }

  /** Returns {@code d} in nanoseconds after checking it is zero or positive. */
  public static long nonNegativeNanos(String name, Duration d) {
    if (d.isNegative()) {
      throw new IllegalArgumentException(name + " : " + d + " (expected: >= 0)");
    }
    return saturatedNanos(d);
  }

  /** Converts to nanoseconds, saturating at {@link Long#MAX_VALUE} (about 292 years). */
  public static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException overflow) {
      return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }
}
