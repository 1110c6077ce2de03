package dev.parapet.core.hedge;

import dev.parapet.core.latency.CachedQuantile;
import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.retry.BudgetSlot;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.time.Durations;
import java.time.Duration;

/**
 * Hedged requests (Dean and Barroso, "The Tail at Scale", 2013; seed 001): when the first attempt
 * has not answered after the origin's rolling p95, send one more and let the first response win.
 *
 * <p>Two calls per hedge-enabled request:
 *
 * <ol>
 *   <li>At the start, {@link #onRequest()} (the request's share of the 15 % cap) and {@link
 *       #delayNanos(long)}: how long to wait before hedging, or {@link #NO_HEDGE}. The delay is
 *       {@code max(minDelay, p95)} over the origin's {@link RollingLatencyHistogram}; with fewer
 *       than {@code minSamples} samples in its window there is no trustworthy p95, and no hedge.
 *   <li>When that timer fires and the first attempt is still out, {@link #tryHedge}: at most one
 *       hedge per request; never unless the breaker is CLOSED (a suspect origin gets no extra
 *       load); a token from the {@link HedgeRateBudget} (15 % of requests); a place in the {@link
 *       ExtraLoadBudget} (shared with retries, or an unbounded counter when separate). The budget
 *       is spent only on hedges actually sent, not on every request that could have hedged.
 * </ol>
 *
 * <p>The p95 is a {@link CachedQuantile}, recomputed at most every {@code refresh} (default 100 ms,
 * by one caller that wins a CAS), because a quantile scans the histogram; both calls are then a few
 * reads and CASes, allocation-free. The breaker is passed in as a boolean so this class stays
 * independent of the breaker's implementation.
 */
public final class HedgePolicy {
  /** {@link #delayNanos} when no hedge should be armed. */
  public static final long NO_HEDGE = -1L;

  /** Hedges per request: "never more than one hedge per client request" (seed 001). */
  public static final int MAX_HEDGES = 1;

  private final CachedQuantile quantile;
  private final long minDelayNanos;
  private final HedgeRateBudget rate;
  private final ExtraLoadBudget extraLoad;

  /**
   * Creates a policy.
   *
   * @param latencies the origin's rolling latencies (recorded by the caller on each attempt)
   * @param quantile which quantile sets the delay, in (0, 1]; 0.95 by default
   * @param minDelay floor of the delay, >= 0
   * @param minSamples samples needed before hedging, >= 1
   * @param refresh how often the quantile is recomputed, > 0
   */
  public HedgePolicy(
      RollingLatencyHistogram latencies,
      double quantile,
      Duration minDelay,
      int minSamples,
      Duration refresh,
      HedgeRateBudget rate,
      ExtraLoadBudget extraLoad) {
    this.quantile = new CachedQuantile(latencies, quantile, minSamples, refresh);
    this.minDelayNanos = Durations.nonNegativeNanos("minDelay", minDelay);
    this.rate = rate;
    this.extraLoad = extraLoad;
  }

  /** p95, floor 20 ms, 20 samples, refresh 100 ms, 15 % of requests (burst 10). */
  public static HedgePolicy withDefaults(
      RollingLatencyHistogram latencies, ExtraLoadBudget extraLoad) {
    return new HedgePolicy(
        latencies,
        0.95,
        Duration.ofMillis(20),
        20,
        Duration.ofMillis(100),
        HedgeRateBudget.withDefaults(),
        extraLoad);
  }

  /** The rule: the hedge delay for a measured quantile ({@code NO_HEDGE} when unknown). */
  public static long delayFor(long quantileNanos, long minDelayNanos) {
    return quantileNanos < 0 ? NO_HEDGE : Math.max(minDelayNanos, quantileNanos);
  }

  /** Counts a request that may be hedged (its share of the rate cap). */
  public void onRequest() {
    rate.onRequest();
  }

  /** How long to wait before hedging a request starting now, or {@link #NO_HEDGE}. */
  public long delayNanos(long nowNanos) {
    return delayFor(quantile.nanos(nowNanos), minDelayNanos);
  }

  /**
   * Decides, when the hedge timer fires, whether to send the hedge.
   *
   * @param breakerClosed whether the origin's breaker is CLOSED right now
   * @param hedgesSent hedges this request already sent
   * @param slot the request's slot; on {@link HedgeDecision#HEDGE} it holds an extra-load place, to
   *     be released when the hedge attempt ends (won, lost or cancelled)
   */
  public HedgeDecision tryHedge(boolean breakerClosed, int hedgesSent, BudgetSlot slot) {
    if (hedgesSent >= MAX_HEDGES) {
      return HedgeDecision.ALREADY_HEDGED;
    }
    if (!breakerClosed) {
      return HedgeDecision.BREAKER_NOT_CLOSED;
    }
    if (!rate.tryAcquire()) {
      return HedgeDecision.RATE_EXHAUSTED;
    }
    if (!extraLoad.tryHedge(slot)) {
      rate.refund();
      return HedgeDecision.EXTRA_LOAD_EXHAUSTED;
    }
    return HedgeDecision.HEDGE;
  }

  /** The rate cap. */
  public HedgeRateBudget rateBudget() {
    return rate;
  }

  /** The extra-load budget hedges draw from. */
  public ExtraLoadBudget extraLoad() {
    return extraLoad;
  }
}
