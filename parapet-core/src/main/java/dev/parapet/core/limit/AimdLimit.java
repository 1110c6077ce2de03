package dev.parapet.core.limit;

/**
 * Additive increase, multiplicative decrease (the TCP Reno rule; Netflix concurrency-limits' {@code
 * AIMDLimit}).
 *
 * <pre>
 *   dropped or rtt &gt; timeout      : limit = max(min, min(limit - 1, floor(limit * backoff)))
 *   inflight * 2 &gt;= limit          : limit = min(max, limit + 1)
 *   otherwise (app-limited)         : unchanged
 * </pre>
 *
 * The app-limited rule keeps the limit from drifting upward while traffic uses less than half of
 * it, so a quiet hour does not leave a huge limit behind for the next burst.
 */
public final class AimdLimit implements LimitAlgorithm {
  private final int min;
  private final int max;
  private final double backoffRatio;
  private final long timeoutNanos;
  private int limit;

  /**
   * @param initial starting limit, in {@code [min, max]}
   * @param backoffRatio multiplier on a drop, in {@code [0.5, 1)} (0.9 is usual)
   * @param timeoutNanos a sample slower than this counts as a drop
   */
  public AimdLimit(int initial, int min, int max, double backoffRatio, long timeoutNanos) {
    Limits.checkBounds(initial, min, max);
    if (!(backoffRatio >= 0.5 && backoffRatio < 1.0)) {
      throw new IllegalArgumentException(
          "backoffRatio : " + backoffRatio + " (expected: in [0.5, 1))");
    }
    if (timeoutNanos <= 0) {
      throw new IllegalArgumentException("timeoutNanos : " + timeoutNanos + " (expected: > 0)");
    }
    this.limit = initial;
    this.min = min;
    this.max = max;
    this.backoffRatio = backoffRatio;
    this.timeoutNanos = timeoutNanos;
  }

  @Override
  public int limit() {
    return limit;
  }

  @Override
  public int onSample(long startNanos, long rttNanos, int inflight, boolean dropped) {
    if (dropped || rttNanos > timeoutNanos) {
      limit = Math.max(min, Math.min(limit - 1, (int) (limit * backoffRatio)));
    } else if (inflight * 2L >= limit) {
      limit = Math.min(max, limit + 1);
    }
    return limit;
  }

  @Override
  public String toString() {
    return "AimdLimit[limit=" + limit + ", min=" + min + ", max=" + max + "]";
  }
}
