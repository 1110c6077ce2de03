package dev.parapet.proxy.config;

import java.time.Duration;

/**
 * Hedged requests to one origin ({@code hedge:}). Off unless the origin has a {@code hedge:} block
 * (DESIGN.md: routes enable hedging); {@code hedge: {}} turns it on with the defaults.
 *
 * @param enabled whether idempotent requests to this origin are hedged
 * @param delay when the extra attempt goes out; {@code p95} of the origin's rolling latency
 * @param minDelay never hedge sooner than this; 20 ms
 * @param budget hedges at most this share of requests; 15 %
 */
public record HedgeConfig(boolean enabled, Delay delay, Duration minDelay, double budget) {
  public static final HedgeConfig DEFAULTS =
      new HedgeConfig(true, new Delay.Percentile(0.95), Duration.ofMillis(20), 0.15);

  /** The default, switched off: what an origin without {@code hedge:} gets. */
  public static final HedgeConfig OFF =
      new HedgeConfig(false, DEFAULTS.delay, DEFAULTS.minDelay, DEFAULTS.budget);

  /** {@code p95} (a rolling latency percentile) or a fixed duration. */
  public sealed interface Delay {
    /**
     * Hedge after the origin's rolling latency at {@code quantile}.
     *
     * @param quantile 0.95 for {@code p95}
     */
    record Percentile(double quantile) implements Delay {}

    record Fixed(Duration delay) implements Delay {}
  }
}
