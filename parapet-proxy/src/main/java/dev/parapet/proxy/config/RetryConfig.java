package dev.parapet.proxy.config;

import dev.parapet.core.retry.RetryOn;
import java.time.Duration;

/**
 * Retries of one origin's attempts ({@code retry:}).
 *
 * @param attempts attempts in total, the first included ({@code 1}: never retry); 2
 * @param on what is worth retrying; {@code [connect_failure, 503]}
 */
public record RetryConfig(int attempts, RetryOn on, Budget budget, Backoff backoff) {
  public static final RetryConfig DEFAULTS =
      new RetryConfig(2, RetryOn.DEFAULTS, Budget.DEFAULTS, Backoff.DEFAULTS);

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
