package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.sim.Series.Col;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Hedging (core HedgePolicy + HedgeRateBudget + ExtraLoadBudget) in the fleet simulation. */
class HedgingScenarioTest {

  private static List<RunResult> run(long seed) throws Exception {
    return Scenarios.runAll(ScenarioFile.load(Path.of("scenarios/hedging.yaml")), seed);
  }

  @Test
  void hedgingCutsTheLongTailWithinTheRateCap() throws Exception {
    List<RunResult> runs = run(1);
    RunResult none = runs.get(0);
    RunResult hedged = runs.get(1);
    assertThat(none.total(Col.HEDGES)).isZero();
    long hedges = hedged.total(Col.HEDGES);
    long requests = hedged.total(Col.SICK_OFFERED);
    assertThat(hedges).isPositive();
    // HedgeRateBudget: at most 15 % of requests (plus a burst of 10 per server).
    assertThat(hedges).isLessThanOrEqualTo((long) (0.15 * requests) + 4 * 10);
    // Every hedge is one extra origin attempt, and some of them answer first.
    assertThat(hedged.total(Col.ATTEMPTS)).isEqualTo(requests + hedges);
    assertThat(hedged.total(Col.HEDGE_WINS)).isPositive().isLessThanOrEqualTo(hedges);
    // The long tail (sigma 1.0: p99 ~10x the median) is cut: hedging after p95 bounds the p99.
    assertThat(hedged.baselineLatencyMillis(0.99))
        .isLessThan(0.7 * none.baselineLatencyMillis(0.99));
    // Every request is answered once: the answers match the offered requests (no request lost or
    // answered twice by a hedge race), and the fleet drains.
    assertThat(hedged.total(Col.ANSWERED)).isBetween(requests - 50, requests);
    assertThat(hedged.total(Col.USER_OK)).isGreaterThanOrEqualTo(none.total(Col.USER_OK));
  }

  @Test
  void hedgedRunsAreDeterministic() throws Exception {
    String a = Report.summary(run(3)) + Report.csv(run(3).get(1));
    String b = Report.summary(run(3)) + Report.csv(run(3).get(1));
    assertThat(a).isEqualTo(b);
  }
}
