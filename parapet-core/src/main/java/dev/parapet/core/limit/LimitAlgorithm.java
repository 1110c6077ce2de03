package dev.parapet.core.limit;

import dev.parapet.core.time.RandomSource;

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

  /**
   * The algorithm named in configuration ({@code admission.limit.algorithm}): {@code fixed} (at
   * {@code initial}), {@code aimd} (backoff 0.9, a sample slower than 5 s counts as a drop), {@code
   * vegas} or {@code gradient2}, each with the given bounds.
   *
   * @throws IllegalArgumentException for any other name or inconsistent bounds
   */
  static LimitAlgorithm named(
      String algorithm, int initial, int min, int max, RandomSource random) {
    return switch (algorithm) {
      case "fixed" -> {
        Limits.checkBounds(initial, min, max);
        yield FixedLimit.of(initial);
      }
      case "aimd" -> new AimdLimit(initial, min, max, 0.9, 5_000_000_000L);
      case "vegas" -> VegasLimit.of(initial, min, max, random);
      case "gradient2" -> Gradient2Limit.of(initial, min, max);
      default ->
          throw new IllegalArgumentException(
              "algorithm : " + algorithm + " (expected: one of fixed, aimd, vegas, gradient2)");
    };
  }
}
