package dev.parapet.core.latency;

import dev.parapet.core.time.Durations;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * When an otherwise good response counts as slow (DESIGN "Outcome classification": weight 0.5):
 * slower than an absolute threshold ({@code slow.threshold: 500ms}), or than a multiple of the
 * origin's own rolling quantile ({@code 3x p95}, seed 001: "exceed your p95 by 3x").
 *
 * <p>Relative form: slow when {@code latency > max(floor, multiplier * quantile)}. The floor stops
 * a very fast origin (p95 of 2 ms) from having every 7 ms response called slow. While the window
 * has too few samples for a quantile, nothing is slow: an unknown baseline is not evidence. The
 * quantile comes from a {@link CachedQuantile}, so the check is a few loads and a multiply.
 */
public final class SlowCallThreshold {
  private final long absoluteNanos;
  private final @Nullable CachedQuantile quantile;
  private final double multiplier;

  private SlowCallThreshold(
      long absoluteNanos, @Nullable CachedQuantile quantile, double multiplier) {
    this.absoluteNanos = absoluteNanos;
    this.quantile = quantile;
    this.multiplier = multiplier;
  }

  /** Slow when slower than {@code threshold}. */
  public static SlowCallThreshold absolute(Duration threshold) {
    return new SlowCallThreshold(Durations.positiveNanos("threshold", threshold), null, 0.0);
  }

  /**
   * Slow when slower than {@code max(floor, multiplier * quantile)}.
   *
   * @param multiplier >= 1, e.g. 3 for {@code 3x p95}
   * @param floor smallest threshold, >= 0
   */
  public static SlowCallThreshold relative(
      CachedQuantile quantile, double multiplier, Duration floor) {
    if (!(multiplier >= 1.0 && multiplier <= 1000.0)) {
      throw new IllegalArgumentException(
          "multiplier : " + multiplier + " (expected: in [1, 1000])");
    }
    return new SlowCallThreshold(Durations.nonNegativeNanos("floor", floor), quantile, multiplier);
  }

  /**
   * The threshold in nanoseconds now, or {@link Long#MAX_VALUE} (nothing is slow) while a relative
   * threshold has no data.
   */
  public long thresholdNanos(long nowNanos) {
    CachedQuantile q = quantile;
    if (q == null) {
      return absoluteNanos;
    }
    long base = q.nanos(nowNanos);
    if (base < 0) {
      return Long.MAX_VALUE;
    }
    double scaled = multiplier * base; // base < 2^40 and multiplier <= 1000: fits a long
    return Math.max(absoluteNanos, (long) scaled);
  }

  /** Whether a response that took {@code latencyNanos} counts as slow. */
  public boolean isSlow(long latencyNanos, long nowNanos) {
    return latencyNanos > thresholdNanos(nowNanos);
  }
}
