package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.sim.Series.Col;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Admission control (core AdmissionController + LimitAlgorithm) in the fleet simulation. */
class LimiterScenarioTest {
  @TempDir Path dir;

  @Test
  void limiterScenarioShedsTheBrownoutsExcessAndHoldsFewerWorkers() throws Exception {
    Scenario sc = ScenarioFile.load(Path.of("scenarios/limiter.yaml"));
    List<RunResult> runs = Scenarios.runAll(sc, 1);
    RunResult none = runs.get(0);
    RunResult aimd = runs.get(1);
    RunResult gradient = runs.get(2);
    assertThat(none.variant().limit()).isNull();
    assertThat(none.total(Col.SHED)).isZero();
    assertThat(none.total(Col.LIMIT)).isZero();
    for (RunResult r : List.of(aimd, gradient)) {
      LimitSpec spec = r.variant().limit();
      assertThat(spec).isNotNull();
      assertThat(r.total(Col.SHED)).as(r.variant().name()).isPositive();
      // Sheds are answered at once: fewer attempts and far fewer worker-seconds in the brownout.
      assertThat(r.faultTotal(Col.ATTEMPTS)).isLessThan(none.faultTotal(Col.ATTEMPTS) / 2);
      assertThat(r.faultWorkerSeconds(Col.WS_EDGE_MS))
          .isLessThan(none.faultWorkerSeconds(Col.WS_EDGE_MS) / 3);
      // The fleet's limit (sum over the 4 servers) stays within the algorithm's bounds.
      for (int s = 0; s < r.series().seconds(); s++) {
        assertThat(r.series().get(s, Col.LIMIT)).isBetween(4L * spec.min(), 4L * spec.max());
      }
    }
    // Admission learns only from healthy answers (the proxy's rule): every brownout answer is slow
    // (1.5 s > 500 ms) or a timeout, so AIMD gets no sample and keeps its limit from the end of the
    // healthy phase; that limit, full of slow requests, is what sheds.
    for (int s = 25; s < 60; s++) {
      long limit = aimd.series().get(s, Col.LIMIT);
      assertThat(limit).as("second %d", s).isEqualTo(aimd.series().get(21, Col.LIMIT));
      assertThat(aimd.series().get(s, Col.BUSY_WORKERS))
          .as("second %d", s)
          .isBetween(limit * 95 / 100, limit);
    }
    String summary = Report.summary(runs);
    assertThat(summary).contains("shed by limiter", "limit (fleet, fault)");
  }

  @Test
  void badLimitsAreReportedWithTheirPath() throws Exception {
    Path f = dir.resolve("bad.yaml");
    Files.writeString(
        f,
        """
        name: bad
        origin: {timeline: [{name: healthy, duration: 5s}]}
        variants:
          - name: a
            limit: {algorithm: nope}
          - name: b
            limit: {algorithm: aimd, initial: 5, min: 10, max: 20}
        """);
    assertThatThrownBy(() -> ScenarioFile.load(f))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("variants[0].limit: algorithm : nope (expected: one of fixed")
        .hasMessageContaining("variants[1].limit:");
  }
}
