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
  void retryStormNaiveRetryAmplifiesByThirtyPercentAndTheBudgetBoundsIt() {
    List<RunResult> runs = Scenarios.runAll(Scenarios.retryStorm().scaled(0.2), 42);
    RunResult naive = runs.get(0);
    RunResult guarded = runs.get(1);
    // Seed 000: 30 % of attempts time out, one retry each: 1 + 0.3 = 1.3x.
    assertThat(naive.phaseAmplification(1)).isCloseTo(1.3, within(0.05));
    // Budget: retries in flight <= 20 % of requests in flight (retries included), so retries are
    // at most 0.2 / (1 - 0.2) = 25 % of attempts: bounded by 1 + budget, below the naive 1.3.
    assertThat(guarded.phaseAmplification(1)).isBetween(1.05, 1.0 + 0.25 + 0.01);
    assertThat(guarded.phaseAmplification(1)).isLessThan(naive.phaseAmplification(1));
    // Hard down: every attempt fails, naive retry doubles the load; the breaker (3 connect
    // failures) opens at once and fails fast, so almost nothing reaches the origin.
    assertThat(naive.phaseAmplification(2)).isCloseTo(2.0, within(0.02));
    assertThat(guarded.phaseAmplification(2)).isLessThan(0.05);
    assertThat(guarded.fastFailShare()).isPositive();
    // Healthy phases: no amplification at all.
    assertThat(naive.series().sum(Col.RETRIES, 0, 10)).isZero();
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
