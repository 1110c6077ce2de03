package dev.parapet.proxy.config;

import dev.parapet.core.retry.RetryOn;
import java.time.Duration;

/**
 * Retries of one origin's attempts ({@code retry:}).
 *
 * @param attempts attempts in total, the first included ({@code 1}: never retry); 2
 * @param on what is worth retrying; {@code [connect_failure, 503]}
 * @param capacityHold how long the origin's {@code Parapet-Capacity: degraded} holds back retries,
 *     hedges and background refreshes when its response has no {@code Retry-After}; zero ignores
 *     the header; 2 s
 */
public record RetryConfig(
    int attempts, RetryOn on, Budget budget, Backoff backoff, Duration capacityHold) {
  /** The default {@code capacity_hold}. */
  public static final Duration CAPACITY_HOLD = Duration.ofSeconds(2);

  public static final RetryConfig DEFAULTS =
      new RetryConfig(2, RetryOn.DEFAULTS, Budget.DEFAULTS, Backoff.DEFAULTS);

  /** Retries that listen to the origin's capacity signals with the default hold. */
  public RetryConfig(int attempts, RetryOn on, Budget budget, Backoff backoff) {
    this(attempts, on, budget, backoff, CAPACITY_HOLD);
  }

  public RetryConfig {
    if (capacityHold.isNegative()) {
      throw new IllegalArgumentException(
          "retry.capacity_hold : " + capacityHold + " (expected: >= 0)");
    }
  }

  /**
   * {@code budget:} active retries may not exceed max(minConcurrency, ratio × active requests).
   *
   * @param ratio 20 %
   * @param minConcurrency 5
   */
  public record Budget(double ratio, int minConcurrency) {
    public static final Budget DEFAULTS = new Budget(0.20, 5);
  }

  /**
   * {@code backoff:} exponential with full jitter.
   *
   * @param base 25 ms
   * @param max 250 ms
   */
  public record Backoff(Duration base, Duration max) {
    public static final Backoff DEFAULTS =
        new Backoff(Duration.ofMillis(25), Duration.ofMillis(250));
  }
}
