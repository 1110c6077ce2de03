package dev.parapet.core.outcome;

import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.function.LongUnaryOperator;

/**
 * When an otherwise good response counts as slow (seed 000: "any origin response that takes longer
 * than our p99 SLO as a half-failure"; seed 001: "exceed your p95 by 3x").
 *
 * <p>Either absolute ({@code 500ms}) or relative to the origin's rolling quantile: slow when {@code
 * latency > max(floor, multiplier × quantile)}. The floor stops a very fast origin (p95 of 2 ms)
 * from having every 7 ms response called slow. While the quantile has too few samples (the source
 * answers a negative value) nothing is slow: an unknown baseline is not evidence. The quantile
 * source is injected — in the proxy a {@code dev.parapet.core.latency.CachedQuantile}, so the check
 * is a few loads and a multiply.
 */
@FunctionalInterface
public interface SlowCallThreshold {

  /** The threshold at {@code nowNanos}; a response strictly slower is slow. */
  long thresholdNanos(long nowNanos);

  /** Never slow. */
  static SlowCallThreshold never() {
    return now -> Long.MAX_VALUE;
  }

  /** Slow above a fixed duration. */
  static SlowCallThreshold absolute(Duration threshold) {
    long nanos = Durations.positiveNanos("slow.threshold", threshold);
    return now -> nanos;
  }

  /**
   * Slow above {@code max(floor, multiplier × quantile)}.
   *
   * @param multiplier in [1, 1000], e.g. 3 for {@code 3x p95}
   * @param quantileNanos the rolling quantile at a given time, negative while it has no data
   * @param floor the smallest threshold, >= 0
   */
  static SlowCallThreshold relative(
      double multiplier, LongUnaryOperator quantileNanos, Duration floor) {
    if (!(multiplier >= 1.0 && multiplier <= 1000.0)) {
      throw new IllegalArgumentException(
          "slow.threshold multiplier : " + multiplier + " (expected: in [1, 1000])");
    }
    long floorNanos = Durations.nonNegativeNanos("slow.threshold floor", floor);
    return now -> {
      long q = quantileNanos.applyAsLong(now);
      if (q < 0) {
        return Long.MAX_VALUE;
      }
      double scaled = multiplier * q;
      return Math.max(floorNanos, scaled >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) scaled);
    };
  }
}
