package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

class SweepTest {
  private static final Scenario SMALL = Scenarios.retryStorm().scaled(0.05);

  @Test
  void statsAreMeanSampleDeviationAndRange() {
    Sweep.Stats s = Sweep.Stats.of(new double[] {1, 2, 3, 6});
    assertThat(s.mean()).isEqualTo(3.0);
    assertThat(s.sd()).isCloseTo(Math.sqrt(14.0 / 3), within(1e-12));
    assertThat(s.min()).isEqualTo(1.0);
    assertThat(s.max()).isEqualTo(6.0);
    assertThat(Sweep.Stats.of(new double[] {4}).sd()).isZero();
  }

  @Test
  void aSweepRunsEveryValueWithEverySeedAndMovesWhatTheParameterMoves() {
    Variant guarded = Sweep.variant(SMALL, null);
    assertThat(guarded.name()).isEqualTo("budget+breaker");
    Sweep.Result r = Sweep.run(SMALL, guarded, Sweep.Param.OPEN_DURATION, new double[] {5, 60}, 2);
    assertThat(r.stats()).hasNumberOfRows(2);
    int attempts = Sweep.Metric.ATTEMPTS_FAULT.ordinal();
    // A breaker that stays open twelve times longer lets fewer attempts through in the fault.
    assertThat(r.stats()[1][attempts].mean()).isLessThan(r.stats()[0][attempts].mean());
    // Same inputs, same bytes.
    assertThat(Sweep.report(r))
        .isEqualTo(
            Sweep.report(
                Sweep.run(SMALL, guarded, Sweep.Param.OPEN_DURATION, new double[] {5, 60}, 2)))
        .contains("sweep open_duration", "5s", "60s", "user success (fault)");
  }

  @Test
  void theHtmlPageIsWellFormedWithOneChartPerMetric() throws Exception {
    Sweep.Result r =
        Sweep.run(
            SMALL,
            Sweep.variant(SMALL, null),
            Sweep.Param.BUDGET_RATIO,
            new double[] {0.1, 0.3},
            1);
    Document doc =
        DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(new ByteArrayInputStream(Sweep.html(r).getBytes(StandardCharsets.UTF_8)));
    assertThat(doc.getElementsByTagName("svg").getLength()).isEqualTo(Sweep.Metric.values().length);
    assertThat(doc.getElementsByTagName("circle").getLength())
        .isEqualTo(2 * Sweep.Metric.values().length);
  }

  @Test
  void parametersTheVariantDoesNotHaveAreRefusedWithWhatWasExpected() {
    Variant naive = Sweep.variant(SMALL, "naive retry");
    assertThatThrownBy(() -> Sweep.Param.FAILURE_THRESHOLD.apply(naive, 0.5))
        .hasMessageContaining("has no breaker");
    assertThatThrownBy(() -> Sweep.Param.BUDGET_RATIO.apply(naive, 0.5))
        .hasMessageContaining("has no retry budget");
    assertThatThrownBy(() -> Sweep.Param.parse("jitter"))
        .hasMessage(
            "--param : jitter (expected: one of failure_threshold, budget_ratio, open_duration)");
    assertThatThrownBy(() -> Sweep.variant(SMALL, "nope")).hasMessageContaining("--variant : nope");
    Variant guarded = Sweep.variant(SMALL, null);
    assertThat(Sweep.Param.FAILURE_THRESHOLD.apply(guarded, 0.3).breaker().failureRate())
        .isEqualTo(0.3);
    assertThat(Sweep.Param.BUDGET_RATIO.apply(guarded, 0.1).budgetRatio()).isEqualTo(0.1);
  }
}
