package dev.parapet.core.outcome;

import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * When a good response counts as slow (seed 000: "any origin response that takes longer than our
 * p99 SLO as a half-failure"; seed 001: "exceed your p95 by 3x").
 *
 * <p>Either absolute ({@code 500ms}) or relative to a rolling percentile ({@code 3x p95}) with a
 * floor, so a quiet origin whose percentile is still unknown uses the floor. The percentile source
 * is injected (the proxy feeds it from the origin's rolling latency quantiles).
 */
@FunctionalInterface
public interface SlowCallThreshold {

  /** The current threshold in nanoseconds; a response strictly slower is slow. */
  long thresholdNanos();

  /** Never slow. */
  static SlowCallThreshold never() {
    return () -> Long.MAX_VALUE;
  }

  /** Slow above a fixed duration. */
  static SlowCallThreshold absolute(Duration threshold) {
    long nanos = Durations.positiveNanos("slow.threshold", threshold);
    return () -> nanos;
  }

  /**
   * Slow above {@code multiplier} times the current value of {@code percentileNanos}, and never
   * below {@code floor}.
   */
  static SlowCallThreshold relative(
      double multiplier, LongSupplier percentileNanos, Duration floor) {
    if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
      throw new IllegalArgumentException(
          "slow.threshold multiplier : " + multiplier + " (expected: >= 1)");
    }
    long floorNanos = Durations.positiveNanos("slow.threshold floor", floor);
    return () -> {
      long p = percentileNanos.getAsLong();
      double scaled = p * multiplier;
      long t = scaled >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) scaled;
      return Math.max(floorNanos, t);
    };
  }
}
