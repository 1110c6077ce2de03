package dev.parapet.core.latency;

import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Rolling latency quantiles for one origin: the hedging delay (p95) and relative slow-call
 * thresholds ({@code 3x p95}) read it; every completed origin attempt records into it.
 *
 * <p><b>How it works.</b> The window (default 10 s) is cut into {@code subWindows} sub-windows
 * (default 5 of 2 s). Each sub-window is a fixed array of log-linear histogram buckets ({@link
 * LogLinearBuckets}: exact below 64 ns, then 32 sub-buckets per power of two), tagged with the
 * number ("epoch") of the time slice it holds. Time slices map onto sub-windows round-robin; the
 * first recorder that finds a sub-window still holding an old epoch claims it with one CAS and
 * clears it, so old samples age out without any timer thread. A quantile sums the sub-windows whose
 * epoch lies within the last {@code subWindows} slices, which covers between {@code window *
 * (subWindows - 1) / subWindows} and {@code window} of history.
 *
 * <p><b>Precision.</b> A quantile is the midpoint of the bucket holding the sample of nearest rank
 * {@code ceil(q * n)}: at most 1/64 (1.6 %) relative error against the exact sample, for latencies
 * up to about 18 minutes (larger ones are clamped). Memory is bounded: {@code subWindows * 1152}
 * int counters (23 KiB with the defaults), whatever the traffic.
 *
 * <p><b>Concurrency.</b> {@link #record} is lock-free and allocation-free: an epoch read, at most
 * one CAS on a sub-window change, and one atomic increment. A recorder that races the rotation of
 * its sub-window may lose its one sample (cleared just after it was counted); counts never go wrong
 * otherwise. {@link #quantile} scans the buckets (a few microseconds): callers on a hot path cache
 * its result, as {@code HedgePolicy} does.
 *
 * <p><b>Why hand-written.</b> The idea is HdrHistogram's (Gil Tene) plus the time-rotated buckets
 * of Finagle's and Resilience4j's sliding windows; parapet-core has zero runtime dependencies, and
 * HdrHistogram's own rolling support ({@code Recorder}) swaps whole histograms through a phaser
 * that the caller must drive, which does not fit "policies take time as an argument".
 */
public final class RollingLatencyHistogram {
  /** Returned by {@link #quantile} when the window holds no sample. */
  public static final long NO_DATA = -1L;

  /** Worst relative error of a reported quantile against the exact sample of the same rank. */
  public static final double MAX_RELATIVE_ERROR = LogLinearBuckets.MAX_RELATIVE_ERROR;

  /** Largest latency told apart; larger samples are recorded as this (about 18 minutes). */
  public static final long MAX_TRACKABLE_NANOS = LogLinearBuckets.MAX_TRACKABLE_NANOS;

  private static final int BUCKETS = LogLinearBuckets.COUNT;
  private static final long NEVER = Long.MIN_VALUE / 2;

  private final int subWindows;
  private final long sliceNanos;
  private final long originNanos;
  private final AtomicLongArray epochs;
  private final AtomicIntegerArray counts;
  private volatile long epochHint;

  /**
   * Creates an empty histogram.
   *
   * @param window how far back samples count (at least one nanosecond per sub-window)
   * @param subWindows how many slices the window is rotated in, 2..60; more means smoother ageing
   *     and more memory
   * @param nowNanos the current monotonic time; epochs count from here
   */
  public RollingLatencyHistogram(Duration window, int subWindows, long nowNanos) {
    long windowNanos = Durations.positiveNanos("window", window);
    if (subWindows < 2 || subWindows > 60) {
      throw new IllegalArgumentException("subWindows : " + subWindows + " (expected: in [2, 60])");
    }
    if (windowNanos < subWindows) {
      throw new IllegalArgumentException(
          "window : " + window + " (expected: >= " + subWindows + " ns, one per sub-window)");
    }
    this.subWindows = subWindows;
    this.sliceNanos = windowNanos / subWindows;
    this.originNanos = nowNanos;
    this.epochs = new AtomicLongArray(subWindows);
    for (int i = 0; i < subWindows; i++) {
      epochs.set(i, NEVER);
    }
    this.counts = new AtomicIntegerArray(subWindows * BUCKETS);
  }

  /** The defaults: a 10 s window rotated in 5 slices of 2 s. */
  public static RollingLatencyHistogram withDefaults(long nowNanos) {
    return new RollingLatencyHistogram(Duration.ofSeconds(10), 5, nowNanos);
  }

  /** Records one latency observed at {@code nowNanos}; negative latencies count as zero. */
  public void record(long latencyNanos, long nowNanos) {
    long epoch = epochOf(nowNanos);
    int slot = slotOf(epoch);
    long seen = epochs.get(slot);
    if (seen != epoch) {
      if (epoch - seen < 0) {
        return; // a late sample whose slice has already aged out and been reused
      }
      if (epochs.compareAndSet(slot, seen, epoch)) {
        clear(slot);
      } else if (epochs.get(slot) != epoch) {
        return; // another recorder moved the slot on to a newer slice: this sample is too old
      }
    }
    counts.getAndIncrement(slot * BUCKETS + LogLinearBuckets.index(latencyNanos));
  }

  /**
   * Returns the {@code q}-quantile of the samples in the window, in nanoseconds, or {@link
   * #NO_DATA}. Uses the nearest-rank definition ({@code ceil(q * n)}-th smallest sample) and
   * reports its bucket midpoint (see the class comment for the error bound).
   *
   * @param q in (0, 1], e.g. 0.5, 0.95, 0.99
   */
  public long quantile(double q, long nowNanos) {
    if (!(q > 0.0 && q <= 1.0)) {
      throw new IllegalArgumentException("q : " + q + " (expected: in (0, 1])");
    }
    long live = liveMask(epochOf(nowNanos));
    long total = countLive(live);
    if (total == 0) {
      return NO_DATA;
    }
    long rank = Math.max(1L, (long) Math.ceil(q * total));
    long seen = 0;
    int last = -1;
    for (int b = 0; b < BUCKETS; b++) {
      long inBucket = 0;
      for (long m = live; m != 0; m &= m - 1) {
        inBucket += counts.get(Long.numberOfTrailingZeros(m) * BUCKETS + b);
      }
      if (inBucket > 0) {
        last = b;
        seen += inBucket;
        if (seen >= rank) {
          return LogLinearBuckets.midpoint(b);
        }
      }
    }
    // Counts shrank under a concurrent rotation between the two scans: report the largest sample.
    return last < 0 ? NO_DATA : LogLinearBuckets.midpoint(last);
  }

  /** Number of samples currently in the window. */
  public long count(long nowNanos) {
    return countLive(liveMask(epochOf(nowNanos)));
  }

  private long countLive(long live) {
    long total = 0;
    for (long m = live; m != 0; m &= m - 1) {
      int base = Long.numberOfTrailingZeros(m) * BUCKETS;
      for (int b = 0; b < BUCKETS; b++) {
        total += counts.get(base + b);
      }
    }
    return total;
  }

  /**
   * Bit {@code s} set when sub-window {@code s} holds one of the last {@code subWindows} slices.
   */
  private long liveMask(long currentEpoch) {
    long mask = 0;
    for (int s = 0; s < subWindows; s++) {
      long age = currentEpoch - epochs.get(s);
      if (age >= 0 && age < subWindows) {
        mask |= 1L << s;
      }
    }
    return mask;
  }

  private long epochOf(long nowNanos) {
    // Subtraction first: wrap-safe for any nanoTime origin within 292 years.
    long sinceOrigin = nowNanos - originNanos;
    // Nearly every call falls in the same slice as the previous one: check the hint with a
    // multiply and a compare instead of a 64-bit division (tens of cycles). The hint is only a
    // hint: any value is safe, a racing writer just costs the next caller one division.
    long hint = epochHint;
    long offset = sinceOrigin - hint * sliceNanos;
    if (offset >= 0 && offset < sliceNanos) {
      return hint;
    }
    long epoch = Math.floorDiv(sinceOrigin, sliceNanos);
    epochHint = epoch;
    return epoch;
  }

  private int slotOf(long epoch) {
    return (int) Math.floorMod(epoch, (long) subWindows);
  }

  private void clear(int slot) {
    int base = slot * BUCKETS;
    for (int b = 0; b < BUCKETS; b++) {
      counts.set(base + b, 0);
    }
  }
}
