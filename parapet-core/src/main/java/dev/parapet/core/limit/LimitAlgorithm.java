package dev.parapet.core.limit;

/**
 * A concurrency-limit algorithm: pure feedback from completed requests to a new limit, in the shape
 * of Netflix concurrency-limits' {@code Limit.onSample}. It never reads a clock (times are passed
 * in) and never admits anything: the {@link ConcurrencyGate} does that.
 *
 * <p>Implementations are not thread-safe; the gate serialises calls to {@link #onSample}.
 */
public interface LimitAlgorithm {

  /** The current limit, at least 1. */
  int limit();

  /**
   * Feeds one completed request and returns the new limit (at least 1).
   *
   * @param startNanos when the request was admitted (ticker reading)
   * @param rttNanos how long it took; samples with {@code rttNanos <= 0} carry no latency
   *     information and only count when {@code dropped}
   * @param inflight requests in flight when this one was admitted, itself included
   * @param dropped whether the request timed out or was rejected by the origin (a congestion
   *     signal)
   */
  int onSample(long startNanos, long rttNanos, int inflight, boolean dropped);
}
