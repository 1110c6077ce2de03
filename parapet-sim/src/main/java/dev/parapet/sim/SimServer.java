package dev.parapet.sim;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.exchange.AttemptPolicy;
import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.outcome.OutcomeClassifier;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.retry.RetryBudget;
import dev.parapet.core.retry.RetryOn;
import dev.parapet.core.retry.RetryPolicy;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One simulated edge server: what it owns of the core for the origin under test — its own breaker
 * (seed 002: local breakers, no coordination), the origin's {@link AttemptPolicy} (classification,
 * retries and hedges over one extra-load budget, rolling latency) and its admission control — and
 * the counts that stand for its workers and its healthy-route traffic.
 *
 * <p>The variant's retry mode becomes a core {@link RetryPolicy}, so the retry decision is always
 * the core's:
 *
 * <ul>
 *   <li>{@code budget}: 2 attempts, backoff 25 ms to 250 ms with full jitter, within a {@link
 *       RetryBudget} of the variant's ratio and floor (the proxy's defaults: 20 %, 5);
 *   <li>{@code naive} (seed 000's "one retry", no budget): 2 attempts, a 1 ns backoff and an
 *       unbounded budget;
 *   <li>{@code none}: 1 attempt.
 * </ul>
 *
 * All three retry what the naive policy of seed 000 retries: connect failures, timeouts and 5xx.
 */
final class SimServer {
  /** What a failed attempt may be retried for, in every retry mode. */
  static final RetryOn RETRY_ON = new RetryOn(true, true, List.of("5xx"));

  /** The simulation this server is part of (its requests reach it through their server). */
  final FleetSimulation sim;

  final @Nullable CircuitBreaker breaker;
  final AttemptPolicy policy;
  final @Nullable AdmissionController admission;

  // Arrivals: fractional accumulators (all traffic, and the share that goes to the sick origin).
  double arrivals;
  double sickAcc;
  // Fresh cache hits among them (an accumulator started half-way: no random draw).
  double hitAcc = 0.5;
  int busy;
  // Healthy-route release apportionment, per release bin (see FleetSimulation.releaseHealthy).
  final double[] healthyCredit;
  final long[] healthyCount;
  // Healthy-route requests due to finish, by tick (a ring of counts): they never touch the core,
  // so they are not individual events; each only holds a worker until its tick.
  final int[] healthyDue;

  SimServer(
      FleetSimulation sim,
      int id,
      Variant v,
      OutcomeClassifier classifier,
      SimRandom random,
      BreakerListener listener,
      int healthyBins,
      int healthyRing) {
    this.sim = sim;
    BreakerPolicy p = v.breaker();
    this.breaker =
        p == null
            ? null
            : new CircuitBreaker(
                BreakerKey.of(Scope.ORIGIN, "origin@server-" + id), p, random, listener, 0);
    this.policy = attemptPolicy(v, classifier, random);
    LimitSpec limit = v.limit();
    this.admission = limit == null ? null : limit.create(random);
    this.arrivals = random.nextDouble();
    this.sickAcc = random.nextDouble();
    this.healthyCredit = new double[healthyBins];
    this.healthyCount = new long[healthyBins];
    this.healthyDue = new int[healthyRing];
  }

  /**
   * The origin's attempt policy on this server, built as the proxy builds it: one extra-load budget
   * shared by retries and hedges; with hedging, one latency histogram recorded per response and
   * read by the hedge delay (without it nothing reads latencies, so none are recorded).
   */
  static AttemptPolicy attemptPolicy(Variant v, OutcomeClassifier classifier, SimRandom random) {
    Duration minUseful = Duration.ofNanos(v.deadlines().minUsefulNanos());
    RetryPolicy retry =
        switch (v.retry()) {
          case BUDGET ->
              new RetryPolicy(
                  2,
                  Duration.ofMillis(25),
                  Duration.ofMillis(250),
                  minUseful,
                  random,
                  new ExtraLoadBudget(
                      new RetryBudget(v.budgetRatio(), v.budgetMin()),
                      ExtraLoadBudget.Sharing.SHARED));
          case NAIVE ->
              new RetryPolicy(
                  2,
                  Duration.ofNanos(1),
                  Duration.ofNanos(1),
                  minUseful,
                  random,
                  new ExtraLoadBudget(RetryBudget.unbounded(), ExtraLoadBudget.Sharing.SHARED));
          case NONE ->
              new RetryPolicy(
                  1,
                  Duration.ofMillis(25),
                  Duration.ofMillis(250),
                  minUseful,
                  random,
                  ExtraLoadBudget.sharedDefaults());
        };
    AttemptPolicy.Builder b =
        AttemptPolicy.builder(Duration.ofNanos(v.connectorTimeoutNanos()), retry)
            .classifier(classifier)
            .retryOn(RETRY_ON);
    if (v.hedge()) {
      RollingLatencyHistogram latency = RollingLatencyHistogram.withDefaults(0);
      b.latency(latency).hedge(HedgePolicy.withDefaults(latency, retry.budget()));
    }
    return b.build();
  }
}
