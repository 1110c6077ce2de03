package dev.parapet.proxy.server;

import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.hedge.HedgeRateBudget;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.retry.RetryBudget;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.time.RandomSource;
import dev.parapet.proxy.config.HedgeConfig;
import dev.parapet.proxy.config.RetryConfig;
import dev.parapet.proxy.config.RetryOn;
import dev.parapet.proxy.upstream.OriginSettings;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One origin pool's extra-load policies, built from its settings: the core's {@link RetryPolicy}
 * and {@link HedgePolicy} over one shared {@link ExtraLoadBudget}, so retries and hedges together
 * stay within one ceiling (seed 001: "hedged requests with a strict retry budget").
 */
final class OriginTraffic {
  /** Hedges the rate cap lets through in a burst before the 15 % share applies. */
  private static final int HEDGE_BURST = 10;

  /** Samples the origin's latency needs before a p95 hedge delay is trusted. */
  private static final int HEDGE_MIN_SAMPLES = 20;

  final RetryOn retryOn;
  final RetryPolicy retry;
  final ExtraLoadBudget extraLoad;
  final @Nullable HedgePolicy hedge;

  /** A configured fixed hedge delay in nanoseconds, or -1 for the rolling percentile. */
  private final long fixedHedgeDelayNanos;

  private OriginTraffic(
      RetryOn retryOn,
      RetryPolicy retry,
      ExtraLoadBudget extraLoad,
      @Nullable HedgePolicy hedge,
      long fixedHedgeDelayNanos) {
    this.retryOn = retryOn;
    this.retry = retry;
    this.extraLoad = extraLoad;
    this.hedge = hedge;
    this.fixedHedgeDelayNanos = fixedHedgeDelayNanos;
  }

  /** When to hedge a request starting now, or {@link HedgePolicy#NO_HEDGE}. */
  long hedgeDelayNanos(long nowNanos) {
    HedgePolicy h = hedge;
    if (h == null) {
      return HedgePolicy.NO_HEDGE;
    }
    return fixedHedgeDelayNanos >= 0 ? fixedHedgeDelayNanos : h.delayNanos(nowNanos);
  }

  static OriginTraffic of(OriginSettings s, RandomSource random, Duration minUseful) {
    RetryConfig r = s.retry();
    ExtraLoadBudget extra =
        new ExtraLoadBudget(
            new RetryBudget(r.budget().ratio(), r.budget().minConcurrency()),
            ExtraLoadBudget.Sharing.SHARED);
    RetryPolicy retry =
        new RetryPolicy(
            r.attempts(), r.backoff().base(), r.backoff().max(), minUseful, random, extra);
    HedgeConfig h = s.hedge();
    HedgePolicy hedge = null;
    long fixedDelay = -1;
    if (h.enabled()) {
      double quantile = 0.95;
      if (h.delay() instanceof HedgeConfig.Delay.Percentile p) {
        quantile = p.quantile();
      } else if (h.delay() instanceof HedgeConfig.Delay.Fixed f) {
        fixedDelay = f.delay().toNanos();
      }
      hedge =
          new HedgePolicy(
              s.latency(),
              quantile,
              h.minDelay(),
              HEDGE_MIN_SAMPLES,
              Duration.ofMillis(100),
              new HedgeRateBudget(h.budget(), HEDGE_BURST),
              extra);
    }
    return new OriginTraffic(r.on(), retry, extra, hedge, fixedDelay);
  }
}
