package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.exchange.ExchangeFailure;
import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.retry.RetryRefusal;
import dev.parapet.sim.Series.Col;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The simulator runs the core's request sequence ({@code AttemptSequence}), not a copy of it:
 * decisions that only the core makes — a retry refused by the extra-load budget, a hedge refused
 * because the breaker is not CLOSED — show up in simulated runs, and what the series count agrees
 * with what the sequence reported through its hooks.
 */
class SequenceDecisionsTest {

  @Test
  void retriesAreDecidedByTheCoresPolicyAndBudget() {
    List<RunResult> runs = Scenarios.runAll(Scenarios.retryStorm().scaled(0.2), 42);
    RunResult naive = runs.get(0);
    RunResult guarded = runs.get(1);
    // The budget (20 % of active requests, at least 5) refuses retries; the naive variant's
    // unbounded budget never does, and its second failure ends on the attempt limit.
    assertThat(guarded.decisions().retriesRefused(RetryRefusal.BUDGET)).isPositive();
    assertThat(naive.decisions().retriesRefused(RetryRefusal.BUDGET)).isZero();
    assertThat(naive.decisions().retriesRefused(RetryRefusal.ATTEMPTS_EXHAUSTED)).isPositive();
    // The breaker opens in the outage: the core then refuses the retries it had decided.
    assertThat(guarded.decisions().failures(ExchangeFailure.RETRY_BREAKER_OPEN)).isPositive();
    for (RunResult r : runs) {
      Decisions d = r.decisions();
      // Every retry the core decided is sent, unless the deadline or the breaker stops it when
      // its backoff ends.
      assertThat(r.total(Col.RETRIES))
          .as(r.variant().name())
          .isEqualTo(
              d.retriesDecided()
                  - d.failures(ExchangeFailure.DEADLINE_BEFORE_RETRY)
                  - d.failures(ExchangeFailure.RETRY_BREAKER_OPEN));
      // Fast fails are the core's breaker refusals, of first attempts and of retries.
      assertThat(r.total(Col.FAST_FAIL))
          .as(r.variant().name())
          .isEqualTo(
              d.failures(ExchangeFailure.BREAKER_OPEN)
                  + d.failures(ExchangeFailure.RETRY_BREAKER_OPEN));
    }
  }

  @Test
  void hedgesAreRefusedWhileTheBreakerIsNotClosed() throws Exception {
    Scenario sc =
        ScenarioFile.parse(
            """
            name: hedge-breaker
            fleet: {pops: 4, servers_per_pop: 1, workers_per_server: 2000, rate_per_server: 250}
            traffic: {sick_share: 100%}
            origin:
              slow_threshold: 2s
              timeline:
                - {name: long-tail, duration: 30s, median: 40ms, sigma: 1.0}
                - {name: failing, duration: 20s, median: 40ms, sigma: 1.0, error_rate: 60%}
                - {name: recovery, duration: 60s, median: 40ms, sigma: 1.0}
            variants:
              - name: hedge
                timeouts: [3s]
                hedge: true
              - name: hedge + breaker
                timeouts: [3s]
                hedge: true
                breaker: {}
            """,
            "hedge-breaker.yaml");
    List<RunResult> runs = Scenarios.runAll(sc, 1);
    RunResult plain = runs.get(0);
    RunResult guarded = runs.get(1);
    assertThat(guarded.opens()).isPositive();
    // Half-open and ramping breakers let requests through; the core refuses to hedge them.
    assertThat(guarded.decisions().hedges(HedgeDecision.BREAKER_NOT_CLOSED)).isPositive();
    assertThat(plain.decisions().hedges(HedgeDecision.BREAKER_NOT_CLOSED)).isZero();
    for (RunResult r : runs) {
      // A hedge attempt goes out exactly when the core decided HEDGE.
      assertThat(r.total(Col.HEDGES))
          .as(r.variant().name())
          .isPositive()
          .isEqualTo(r.decisions().hedges(HedgeDecision.HEDGE));
      assertThat(r.total(Col.HEDGE_WINS)).isPositive().isLessThanOrEqualTo(r.total(Col.HEDGES));
    }
  }
}
