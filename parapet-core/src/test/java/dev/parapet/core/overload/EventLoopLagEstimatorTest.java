package dev.parapet.core.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EventLoopLagEstimatorTest {

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 1_000L})
  void smoothsLagAndKeepsThePeak(long start) {
    EventLoopLagEstimator e = new EventLoopLagEstimator(0.5);
    assertThat(e.lagNanos()).isZero();
    assertThat(e.record(start, start + 1000)).isEqualTo(1000);
    assertThat(e.lagNanos()).isEqualTo(1000); // the first sample seeds the average
    e.record(start + 2000, start + 5000); // 3000
    assertThat(e.lagNanos()).isEqualTo(2000);
    assertThat(e.record(start + 10_000, start + 9_000)).isZero(); // ran early: no lag
    assertThat(e.lagNanos()).isEqualTo(1000);
    assertThat(e.drainPeakNanos()).isEqualTo(3000);
    assertThat(e.drainPeakNanos()).isZero();
  }

  @ParameterizedTest
  @ValueSource(doubles = {0.0, 1.5, Double.NaN})
  void rejectsABadAlpha(double alpha) {
    assertThatThrownBy(() -> new EventLoopLagEstimator(alpha))
        .hasMessage("alpha : " + alpha + " (expected: in (0, 1])");
  }
}
