package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class DeterminismTest {

  private static String render(long seed) {
    List<RunResult> runs = Scenarios.runAll(Scenarios.retryStorm().scaled(0.05), seed);
    StringBuilder all = new StringBuilder(Report.summary(runs));
    for (RunResult r : runs) {
      all.append(Report.csvFileName(r)).append('\n').append(Report.csv(r));
    }
    return all.toString();
  }

  @Test
  void sameSeedGivesByteIdenticalSummaryAndCsv() {
    assertThat(render(7)).isEqualTo(render(7));
  }

  @Test
  void differentSeedsGiveDifferentRuns() {
    assertThat(render(7)).isNotEqualTo(render(8));
  }

  @Test
  void csvHasOneLinePerSimulatedSecondAndNamesThePhase() {
    List<RunResult> runs = Scenarios.runAll(Scenarios.retryStorm().scaled(0.05), 1);
    String[] lines = Report.csv(runs.get(0)).split("\n");
    assertThat(lines).hasSize(1 + 130);
    assertThat(lines[0]).startsWith("second,phase,offered,sick_offered,no_worker,attempts");
    assertThat(lines[1]).startsWith("0,healthy,");
    assertThat(lines[11]).startsWith("10,capacity-7k,");
    assertThat(lines[61]).startsWith("60,down,");
    assertThat(lines[130]).startsWith("129,recovery,");
    assertThat(Report.csvFileName(runs.get(1))).isEqualTo("retry-storm-budget-breaker.csv");
  }
}
