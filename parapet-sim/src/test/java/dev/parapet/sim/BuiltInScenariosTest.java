package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.parapet.sim.Series.Col;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Each built-in scenario reproduces its seed's arithmetic on a scaled-down fleet, and protection
 * bounds the damage. Scaling keeps ratios (per-server rate, workers and capacity shrink together).
 */
class BuiltInScenariosTest {

  @Test
  void retryStormNaiveRetryCollapsesTheOriginAndTheBreakerLetsItServe() {
    List<RunResult> runs = Scenarios.runAll(Scenarios.retryStorm().scaled(0.2), 42);
    RunResult naive = runs.get(0);
    RunResult guarded = runs.get(1);
    Scenario sc = naive.scenario();
    double miss = 1 - sc.cache().hitRatio();
    // Healthy: 10k misses/s against 11.95k of capacity: no retry, the workers 84 % busy.
    assertThat(naive.series().sum(Col.RETRIES, 0, 10)).isZero();
    assertThat(naive.phaseUtilisation(0))
        .isCloseTo(sc.offeredRps() * miss / sc.capacityRps(0), within(0.03));
    // Capacity falls to 7k: the queue fills with work whose clients have left, which the origin
    // still serves (abandoned: serve), so goodput collapses far below capacity; naive retries
    // keep the queue full.
    double capacity = sc.capacityRps(1);
    assertThat(naive.phaseRate(Col.ORIGIN_OK, 1)).isLessThan(0.2 * capacity);
    assertThat(naive.faultWastedShare()).isGreaterThan(0.5);
    assertThat(naive.phaseAmplification(1)).isGreaterThan(1.3);
    // The breaker opens on the failures and drains the queue: more goodput, less waste, and users
    // (fresh hits and stale copies included) do no worse.
    assertThat(guarded.timeToOpenSeconds()).isBetween(0.0, 10.0);
    assertThat(guarded.phaseRate(Col.ORIGIN_OK, 1))
        .isGreaterThan(2 * naive.phaseRate(Col.ORIGIN_OK, 1));
    assertThat(guarded.faultWastedShare()).isLessThan(naive.faultWastedShare() / 2);
    assertThat(guarded.phaseUserSuccess(1)).isGreaterThan(naive.phaseUserSuccess(1));
    // Hard down: every miss fails, a naive retry doubles the load; the breaker holds it near 0.
    assertThat(naive.phaseAmplification(2)).isCloseTo(2.0, within(0.05));
    assertThat(guarded.phaseAmplification(2)).isLessThan(0.05);
    // Users of the origin see what the edge serves: fresh hits, then stale copies for half the
    // failed misses.
    assertThat(naive.phaseUserSuccess(2))
        .isCloseTo(sc.cache().hitRatio() + miss * sc.cache().staleIfError(), within(0.02));
    // Little's law holds at the origin.
    for (RunResult r : runs) {
      double[] little = r.littlesLaw();
      assertThat(little[0]).isCloseTo(little[1], within(0.02 * little[1] + 1));
    }
  }

  @Test
  void slowOriginCutsCapacityByThirtyAndTheBreakerFreesWorkers() {
    List<RunResult> runs = Scenarios.runAll(Scenarios.slowOrigin().scaled(0.02), 42);
    RunResult plain = runs.get(0);
    RunResult guarded = runs.get(1);
    // Seed 001: p50 120 ms -> 4 s is capacity / 33 (Little's law: workers / mean hold time).
    assertThat(Scenarios.capacityRatio(plain)).isCloseTo(4000.0 / 120.0, within(4.0));
    // The breaker opens and fails fast, so workers are free again during the brownout.
    assertThat(guarded.timeToOpenSeconds()).isBetween(0.0, 15.0);
    assertThat(guarded.fastFailShare()).isGreaterThan(0.2);
    int lateBrownout = plain.phaseEndSecond(1) - 5;
    assertThat(guarded.series().get(lateBrownout, Col.BUSY_WORKERS))
        .isLessThan(plain.series().get(lateBrownout, Col.BUSY_WORKERS) / 4);
    assertThat(guarded.faultWorkerSeconds(Col.WS_EDGE_MS))
        .isLessThan(plain.faultWorkerSeconds(Col.WS_EDGE_MS) / 4);
    assertThat(plain.timeToOpenSeconds()).isEqualTo(-1);
  }

  @Test
  void unjitteredBreakersProbeInTheSameSecondJitteredOnesDoNot() {
    List<RunResult> runs = Scenarios.runAll(Scenarios.synchronizedProbes().scaled(0.25), 42);
    RunResult exact = runs.get(0);
    RunResult jittered = runs.get(1);
    // Seed 000: "without it, 200 PoPs all probing at the same second".
    assertThat(exact.maxProbesPerSecond()).isGreaterThanOrEqualTo(190);
    assertThat(jittered.maxProbesPerSecond()).isLessThan(60);
    // Both fleets opened at the start of the outage and sent the same kind of probes.
    assertThat(exact.timeToOpenSeconds()).isBetween(0.0, 1.0);
    assertThat(jittered.timeToOpenSeconds()).isBetween(0.0, 1.0);
    assertThat(exact.total(Col.PROBES)).isGreaterThanOrEqualTo(200);
    assertThat(jittered.total(Col.PROBES)).isGreaterThanOrEqualTo(200);
  }

  @Test
  void tieredTimeoutsHoldFarFewerWorkerSecondsThanThirtyEverywhere() {
    List<RunResult> runs = Scenarios.runAll(Scenarios.tieredTimeouts(), 42);
    RunResult flat = runs.get(0);
    RunResult tiered = runs.get(1);
    RunResult breaker = runs.get(2);
    for (Col tier : List.of(Col.WS_EDGE_MS, Col.WS_SHIELD_MS, Col.WS_CONNECTOR_MS)) {
      assertThat(flat.faultWorkerSeconds(tier))
          .as("%s", tier)
          .isGreaterThan(tiered.faultWorkerSeconds(tier) * 1.5);
      assertThat(tiered.faultWorkerSeconds(tier))
          .as("%s", tier)
          .isGreaterThan(breaker.faultWorkerSeconds(tier) * 1.5);
    }
    // Inner tiers never hold longer than the outer ones wait.
    assertThat(tiered.faultWorkerSeconds(Col.WS_CONNECTOR_MS))
        .isLessThanOrEqualTo(tiered.faultWorkerSeconds(Col.WS_SHIELD_MS) + 1);
    assertThat(tiered.faultWorkerSeconds(Col.WS_SHIELD_MS))
        .isLessThanOrEqualTo(tiered.faultWorkerSeconds(Col.WS_EDGE_MS) + 1);
    // The healthy half of the traffic shares the workers: it suffers only with 30 s everywhere.
    assertThat(breaker.healthyRouteSuccessRate()).isGreaterThan(0.999);
    assertThat(flat.healthyRouteSuccessRate()).isLessThan(breaker.healthyRouteSuccessRate());
  }
}
