package dev.parapet.sim;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.deadline.DeadlinePolicy;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One way of running a scenario: which protections the servers have. Every scenario runs at least
 * two variants side by side (unprotected and protected).
 *
 * @param name column title in the summary
 * @param breaker the policy of each server's own breaker on the sick origin, or null for none
 * @param retry retry behaviour on a failed attempt
 * @param budgetRatio retry budget share of active requests (with {@link RetryMode#BUDGET})
 * @param budgetMin retry budget floor (with {@link RetryMode#BUDGET})
 * @param tierTimeoutsMillis timeouts from the outside in: edge, shield, connector (one value means
 *     a single tier); the connector's is the origin attempt timeout
 * @param limit each server's admission control (a concurrency limit, per request), or null for none
 * @param hedge whether requests are hedged by the core's {@code HedgePolicy} (defaults)
 * @param deadlines the edge's deadline policy: the reserve it keeps back and the least time worth
 *     an attempt ({@code deadline: {reserve, min_useful}}, the proxy's defaults 50 ms and 20 ms)
 */
record Variant(
    String name,
    @Nullable BreakerPolicy breaker,
    RetryMode retry,
    double budgetRatio,
    int budgetMin,
    List<Long> tierTimeoutsMillis,
    @Nullable LimitSpec limit,
    boolean hedge,
    DeadlinePolicy deadlines) {

  /** A variant without admission control or hedging, with the proxy's default deadline policy. */
  Variant(
      String name,
      @Nullable BreakerPolicy breaker,
      RetryMode retry,
      double budgetRatio,
      int budgetMin,
      List<Long> tierTimeoutsMillis) {
    this(
        name,
        breaker,
        retry,
        budgetRatio,
        budgetMin,
        tierTimeoutsMillis,
        null,
        false,
        DeadlinePolicy.withDefaults());
  }

  Variant {
    tierTimeoutsMillis = List.copyOf(tierTimeoutsMillis);
    if (tierTimeoutsMillis.isEmpty() || tierTimeoutsMillis.size() > 3) {
      throw new IllegalArgumentException(
          "tierTimeoutsMillis : " + tierTimeoutsMillis + " (expected: 1 to 3 values)");
    }
  }

  long edgeTimeoutNanos() {
    return tierTimeoutsMillis.get(0) * 1_000_000L;
  }

  long connectorTimeoutNanos() {
    return tierTimeoutsMillis.get(tierTimeoutsMillis.size() - 1) * 1_000_000L;
  }

  /** Timeout of tier {@code i} (0 edge, 1 shield, 2 connector); missing tiers inherit the last. */
  long tierTimeoutNanos(int i) {
    return tierTimeoutsMillis.get(Math.min(i, tierTimeoutsMillis.size() - 1)) * 1_000_000L;
  }
}
