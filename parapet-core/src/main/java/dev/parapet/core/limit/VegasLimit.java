package dev.parapet.core.limit;

import dev.parapet.core.time.RandomSource;

/**
 * Delay-based limit after TCP Vegas (Brakmo and Peterson, 1995), as adapted for request concurrency
 * by Netflix concurrency-limits' {@code VegasLimit}. It estimates how many requests are queued
 * inside the origin from the ratio of the best-seen RTT to the current one:
 *
 * <pre>
 *   queue = ceil(limit * (1 - rttNoLoad / rtt))          // limit - throughput * rttNoLoad
 *   step  = max(1, floor(log10(limit)))                   // grows slowly at large limits
 *   alpha = 3 * step,  beta = 6 * step,  threshold = step
 *
 *   dropped                 : limit = limit - step
 *   inflight * 2 &lt; limit    : unchanged (app-limited: no evidence about capacity)
 *   queue &lt;= threshold      : limit = limit + beta       (no queueing: grow fast)
 *   queue &lt; alpha           : limit = limit + step       (little queueing: grow)
 *   queue &gt; beta            : limit = limit - step       (queueing: shrink)
 *   otherwise               : unchanged
 *   limit = clamp((1 - smoothing) * old + smoothing * limit, min, max)
 * </pre>
 *
 * {@code rttNoLoad} is the smallest RTT seen. Because it can only fall, the limiter periodically
 * forgets it: after {@code probeMultiplier * limit * jitter} samples (jitter uniform in [0.5, 1),
 * from the injected {@link RandomSource} so a fleet does not probe in step) the next sample becomes
 * the new baseline.
 */
public final class VegasLimit implements LimitAlgorithm {
  private final int min;
  private final int max;
  private final double smoothing;
  private final int probeMultiplier;
  private final RandomSource random;

  private double estimate;
  private long rttNoLoad;
  private long probeCount;
  private double probeJitter;

  /**
   * @param smoothing weight of a new estimate, in (0, 1]; 1 applies each step in full
   * @param probeMultiplier how many limits' worth of samples between baseline resets (30 usual)
   * @param random jitter for the baseline reset
   */
  public VegasLimit(
      int initial, int min, int max, double smoothing, int probeMultiplier, RandomSource random) {
    Limits.checkBounds(initial, min, max);
    Limits.checkFraction("smoothing", smoothing, false);
    Limits.checkPositive("probeMultiplier", probeMultiplier);
    this.min = min;
    this.max = max;
    this.smoothing = smoothing;
    this.probeMultiplier = probeMultiplier;
    this.random = random;
    this.estimate = initial;
    this.probeJitter = nextJitter();
  }

  /** Vegas with smoothing 1 and probe multiplier 30. */
  public static VegasLimit of(int initial, int min, int max, RandomSource random) {
    return new VegasLimit(initial, min, max, 1.0, 30, random);
  }

  @Override
  public int limit() {
    return (int) estimate;
  }

  /** The current no-load RTT baseline in nanoseconds, 0 before the first sample. */
  public long rttNoLoadNanos() {
    return rttNoLoad;
  }

  @Override
  public int onSample(long startNanos, long rttNanos, int inflight, boolean dropped) {
    if (rttNanos <= 0) {
      return dropped ? apply(estimate - Limits.log10Step(estimate)) : limit();
    }
    probeCount++;
    if (probeCount >= probeJitter * probeMultiplier * estimate) {
      probeCount = 0;
      probeJitter = nextJitter();
      rttNoLoad = rttNanos;
      return limit();
    }
    if (rttNoLoad == 0 || rttNanos < rttNoLoad) {
      rttNoLoad = rttNanos;
      return limit();
    }
    int step = Limits.log10Step(estimate);
    if (dropped) {
      return apply(estimate - step);
    }
    if (inflight * 2.0 < estimate) {
      return limit();
    }
    int queue = (int) Math.ceil(estimate * (1.0 - (double) rttNoLoad / rttNanos));
    if (queue <= step) {
      return apply(estimate + 6 * step);
    } else if (queue < 3 * step) {
      return apply(estimate + step);
    } else if (queue > 6 * step) {
      return apply(estimate - step);
    }
    return limit();
  }

  private int apply(double target) {
    double next = (1.0 - smoothing) * estimate + smoothing * target;
    estimate = Limits.clamp(next, min, max);
    return limit();
  }

  private double nextJitter() {
    return 0.5 + 0.5 * random.nextDouble();
  }

  @Override
  public String toString() {
    return "VegasLimit[limit=" + limit() + ", rttNoLoad=" + rttNoLoad + "ns]";
  }
}
