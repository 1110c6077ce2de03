package dev.parapet.core.overload;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Estimates how late an event loop runs its tasks. The proxy schedules a periodic task on each
 * event loop; when it runs, it reports when it was due and when it ran, and the difference is that
 * loop's lag (the time queued work waited). Like Node's {@code monitorEventLoopDelay} and Netty's
 * pending-task probes, the signal is simple and direct: a saturated loop runs everything late.
 *
 * <p>Keeps an exponentially weighted moving average (weight {@code alpha} for each new sample) for
 * the overload policy and the peak since the last {@link #drainPeakNanos()} for metrics. One writer
 * (the loop's own thread), any number of readers; allocation-free.
 */
public final class EventLoopLagEstimator {
  /** Default weight of a new sample: with one sample per 100 ms, about 1 s of memory. */
  public static final double DEFAULT_ALPHA = 0.1;

  private final double alpha;
  private volatile long smoothedNanos;
  private volatile boolean seeded;
  private final AtomicLong peakNanos = new AtomicLong();

  public EventLoopLagEstimator() {
    this(DEFAULT_ALPHA);
  }

  /** {@code alpha} in {@code (0, 1]}: 1 keeps only the latest sample. */
  public EventLoopLagEstimator(double alpha) {
    if (!(alpha > 0.0 && alpha <= 1.0)) {
      throw new IllegalArgumentException("alpha : " + alpha + " (expected: in (0, 1])");
    }
    this.alpha = alpha;
  }

  /**
   * Records one run of the probe task: due at {@code scheduledAtNanos}, ran at {@code ranAtNanos}
   * (monotonic nanos; a task that ran early counts as zero lag). Returns this sample's lag.
   */
  @SuppressWarnings("NonAtomicVolatileUpdate") // one writer: the loop's own thread
  public long record(long scheduledAtNanos, long ranAtNanos) {
    long lag = Math.max(0L, ranAtNanos - scheduledAtNanos);
    if (seeded) {
      smoothedNanos = smoothedNanos + Math.round((lag - smoothedNanos) * alpha);
    } else {
      smoothedNanos = lag;
      seeded = true;
    }
    long peak;
    do {
      peak = peakNanos.get();
    } while (lag > peak && !peakNanos.compareAndSet(peak, lag));
    return lag;
  }

  /** The smoothed lag in nanoseconds (0 before the first sample). */
  public long lagNanos() {
    return smoothedNanos;
  }

  /** The largest single lag since the previous call, and resets it. */
  public long drainPeakNanos() {
    return peakNanos.getAndSet(0L);
  }
}
