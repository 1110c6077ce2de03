package dev.parapet.core.limit;

/**
 * Gradient limit after Netflix concurrency-limits' {@code Gradient2Limit}: compares the latest RTT
 * with a long-term exponential average and shrinks the limit in proportion when latency rises.
 * Averages rather than minimums, because request RTTs are bursty and a minimum biases toward an
 * unrealistically low baseline that sheds too much.
 *
 * <pre>
 *   longRtt  = mean of the first 10 samples, then EMA with factor 2 / (longWindow + 1)
 *   if longRtt / rtt &gt; 2 : longRtt = 0.9 * longRtt   (recover quickly after a long overload)
 *   if not dropped and inflight &lt; limit / 2 : unchanged (app-limited)
 *   gradient = clamp(longRtt / rtt, 0.5, 1.0)      (0.5 when the request was dropped)
 *   target   = limit * gradient + queueSize
 *   limit    = clamp(limit * (1 - smoothing) + target * smoothing, min, max)
 * </pre>
 *
 * At steady state the gradient is 1 and the limit creeps up by {@code queueSize * smoothing} per
 * sample until latency reacts; a latency rise pulls the gradient below 1 and the limit down by at
 * most half a step per sample. Treating a drop as the steepest gradient is Parapet's addition: a
 * timeout says more about congestion than any RTT.
 */
public final class Gradient2Limit implements LimitAlgorithm {
  private static final int WARMUP_SAMPLES = 10;

  private final int min;
  private final int max;
  private final double smoothing;
  private final int queueSize;
  private final double longFactor;

  private double estimate;
  private double longRtt;
  private int warmupCount;

  /**
   * @param smoothing weight of the new target, in (0, 1] (0.2 usual)
   * @param queueSize how much the limit may grow per full step while latency holds (4 usual)
   * @param longWindow samples in the long-term average (600 usual)
   */
  public Gradient2Limit(
      int initial, int min, int max, double smoothing, int queueSize, int longWindow) {
    Limits.checkBounds(initial, min, max);
    Limits.checkFraction("smoothing", smoothing, false);
    if (queueSize < 0) {
      throw new IllegalArgumentException("queueSize : " + queueSize + " (expected: >= 0)");
    }
    Limits.checkPositive("longWindow", longWindow);
    this.min = min;
    this.max = max;
    this.smoothing = smoothing;
    this.queueSize = queueSize;
    this.longFactor = 2.0 / (longWindow + 1);
    this.estimate = initial;
  }

  /** Gradient2 with smoothing 0.2, queue size 4 and a 600-sample long window. */
  public static Gradient2Limit of(int initial, int min, int max) {
    return new Gradient2Limit(initial, min, max, 0.2, 4, 600);
  }

  /** Parapet's default ({@code admission.limit}): initial 200, min 20, max 2000. */
  public static Gradient2Limit defaults() {
    return of(200, 20, 2000);
  }

  @Override
  public int limit() {
    return (int) estimate;
  }

  /** The long-term RTT average in nanoseconds, 0 before the first sample. */
  public double longRttNanos() {
    return longRtt;
  }

  @Override
  public int onSample(long startNanos, long rttNanos, int inflight, boolean dropped) {
    double gradient;
    if (rttNanos > 0) {
      double rtt = rttNanos;
      if (warmupCount < WARMUP_SAMPLES) {
        warmupCount++;
        longRtt += (rtt - longRtt) / warmupCount;
      } else {
        longRtt += (rtt - longRtt) * longFactor;
      }
      if (longRtt > 2.0 * rtt) {
        longRtt *= 0.9;
      }
      gradient = Math.max(0.5, Math.min(1.0, longRtt / rtt));
    } else if (dropped) {
      gradient = 0.5;
    } else {
      return limit();
    }
    if (dropped) {
      gradient = 0.5;
    } else if (inflight < estimate / 2) {
      return limit();
    }
    double target = estimate * gradient + queueSize;
    estimate = Limits.clamp(estimate * (1.0 - smoothing) + target * smoothing, min, max);
    return limit();
  }

  @Override
  public String toString() {
    return "Gradient2Limit[limit=" + limit() + ", longRtt=" + (long) longRtt + "ns]";
  }
}
