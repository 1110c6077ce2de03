package dev.parapet.core.latency;

import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One quantile of a {@link RollingLatencyHistogram}, recomputed at most every {@code refresh}: what
 * a per-request reader (the hedge delay, a relative slow-call threshold) uses, because {@link
 * RollingLatencyHistogram#quantile} scans the buckets.
 *
 * <p>The caller that finds the value due wins one CAS on the next refresh time and recomputes;
 * everyone else keeps reading the previous value meanwhile, so a read is two volatile loads and a
 * compare. Below {@code minSamples} samples in the window the value is {@link
 * RollingLatencyHistogram#NO_DATA}: a p95 of three samples is not a p95.
 */
public final class CachedQuantile {
  private static final long UNKNOWN = Long.MIN_VALUE;

  private final RollingLatencyHistogram histogram;
  private final double q;
  private final int minSamples;
  private final long refreshNanos;
  private final AtomicLong nextRefresh = new AtomicLong();
  private volatile long cached = UNKNOWN;

  /**
   * Creates a cache over {@code histogram}.
   *
   * @param q the quantile, in (0, 1]
   * @param minSamples samples needed in the window for a value, >= 1
   * @param refresh how often the value is recomputed, > 0
   */
  public CachedQuantile(
      RollingLatencyHistogram histogram, double q, int minSamples, Duration refresh) {
    if (!(q > 0.0 && q <= 1.0)) {
      throw new IllegalArgumentException("quantile : " + q + " (expected: in (0, 1])");
    }
    if (minSamples < 1) {
      throw new IllegalArgumentException("minSamples : " + minSamples + " (expected: >= 1)");
    }
    this.histogram = histogram;
    this.q = q;
    this.minSamples = minSamples;
    this.refreshNanos = Durations.positiveNanos("refresh", refresh);
  }

  /**
   * The quantile in nanoseconds as of the last refresh, or {@link RollingLatencyHistogram#NO_DATA}.
   */
  public long nanos(long nowNanos) {
    long value = cached;
    long next = nextRefresh.get();
    if (value == UNKNOWN) {
      nextRefresh.set(nowNanos + refreshNanos);
      return refresh(nowNanos);
    }
    if (nowNanos - next >= 0 && nextRefresh.compareAndSet(next, nowNanos + refreshNanos)) {
      return refresh(nowNanos);
    }
    return value;
  }

  private long refresh(long nowNanos) {
    long value =
        histogram.count(nowNanos) < minSamples
            ? RollingLatencyHistogram.NO_DATA
            : histogram.quantile(q, nowNanos);
    cached = value;
    return value;
  }

  /** The quantile this cache holds, e.g. 0.95. */
  public double quantile() {
    return q;
  }
}
