package dev.parapet.core.outcome;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class OutcomeClassifierTest {
  private static final long MS = 1_000_000L;

  @Test
  void defaultFailureStatusesAreDesignMd() {
    OutcomeClassifier c = OutcomeClassifier.standard();
    for (int s : new int[] {500, 502, 503, 504, 429}) {
      assertThat(c.classifyResponse(s, MS, 0)).as("status %d", s).isEqualTo(Outcome.FAILURE_STATUS);
    }
    for (int s : new int[] {200, 204, 301, 304, 400, 404, 501, 505}) {
      assertThat(c.classifyResponse(s, MS, 0)).as("status %d", s).isEqualTo(Outcome.SUCCESS);
    }
  }

  @Test
  void promptNotFoundIsAHealthyOrigin() {
    assertThat(OutcomeClassifier.standard().classifyResponse(404, 3 * MS, 0).kind())
        .isEqualTo(Outcome.Kind.SUCCESS);
  }

  @Test
  void kindsAndWeightsOfEveryOutcome() {
    assertThat(Outcome.TIMEOUT.isFailure()).isTrue();
    assertThat(Outcome.CONNECT_FAILURE.isFailure()).isTrue();
    assertThat(Outcome.TLS_FAILURE.isFailure()).isTrue();
    assertThat(Outcome.MALFORMED_RESPONSE.isFailure()).isTrue();
    assertThat(Outcome.SLOW.kind()).isEqualTo(Outcome.Kind.SLOW);
    assertThat(Outcome.CLIENT_CANCELLED.isIgnored()).isTrue();
    assertThat(Outcome.HEDGE_LOST.isIgnored()).isTrue();
    assertThat(Outcome.LOCAL_REJECTION.isIgnored()).isTrue();
  }

  @Test
  void absoluteSlowThreshold() {
    OutcomeClassifier c =
        OutcomeClassifier.standard()
            .withSlowCalls(SlowCallThreshold.absolute(Duration.ofMillis(500)));
    assertThat(c.classifyResponse(200, 500 * MS, 0)).isEqualTo(Outcome.SUCCESS);
    assertThat(c.classifyResponse(200, 501 * MS, 0)).isEqualTo(Outcome.SLOW);
    // a failing status stays a failure however slow
    assertThat(c.classifyResponse(503, 5_000 * MS, 0)).isEqualTo(Outcome.FAILURE_STATUS);
  }

  @Test
  void relativeSlowThresholdFollowsThePercentileWithAFloor() {
    AtomicLong p95 = new AtomicLong(-1);
    OutcomeClassifier c =
        OutcomeClassifier.standard()
            .withSlowCalls(
                SlowCallThreshold.relative(3.0, now -> p95.get(), Duration.ofMillis(100)));
    // unknown percentile: nothing is slow (an unknown baseline is not evidence)
    assertThat(c.classifyResponse(200, 10_000 * MS, 0)).isEqualTo(Outcome.SUCCESS);
    p95.set(
        180 * MS); // seed 001: "exceed your p95 by 3x (e.g., over 600ms when your p95 is 180ms)"
    assertThat(c.classifyResponse(200, 540 * MS, 0)).isEqualTo(Outcome.SUCCESS);
    assertThat(c.classifyResponse(200, 541 * MS, 0)).isEqualTo(Outcome.SLOW);
    p95.set(2 * MS); // a very fast origin: the floor applies
    assertThat(c.classifyResponse(200, 100 * MS, 0)).isEqualTo(Outcome.SUCCESS);
    assertThat(c.classifyResponse(200, 101 * MS, 0)).isEqualTo(Outcome.SLOW);
  }

  @Test
  void customStatusSets() {
    StatusSet s = StatusSet.parse(List.of("5xx", "429", "418-420"));
    assertThat(s.contains(599)).isTrue();
    assertThat(s.contains(500)).isTrue();
    assertThat(s.contains(499)).isFalse();
    assertThat(s.contains(419)).isTrue();
    assertThat(s.contains(421)).isFalse();
    assertThat(s.contains(-1)).isFalse();
    assertThat(s.contains(700)).isFalse();
    assertThat(StatusSet.none().contains(500)).isFalse();
    OutcomeClassifier c = OutcomeClassifier.standard().withFailureStatuses(s);
    assertThat(c.classifyResponse(501, MS, 0)).isEqualTo(Outcome.FAILURE_STATUS);
  }

  @Test
  void badStatusesAreAllReported() {
    assertThatThrownBy(() -> StatusSet.parse(List.of("5xy", "700", "503")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("status : 5xy (expected:")
        .hasMessageContaining("status : 700 (expected: codes within 100-599)");
  }

  @Test
  void relativeThresholdRejectsNonsense() {
    assertThatThrownBy(() -> SlowCallThreshold.relative(0.5, now -> 1, Duration.ofMillis(1)))
        .hasMessage("slow.threshold multiplier : 0.5 (expected: in [1, 1000])");
  }
}
