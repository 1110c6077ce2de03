package dev.parapet.core.balance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SlowStartTest {
  private static final long SECOND = 1_000_000_000L;

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 10 * SECOND, Long.MIN_VALUE + 5})
  void rampsLinearlyFromTheFloorToFullWeight(long returned) {
    SlowStart s = SlowStart.of(Duration.ofSeconds(30));
    TestHealth health = new TestHealth(2);
    health.returnAt(1, returned);
    assertThat(s.factor(health, 0, returned)).isEqualTo(1.0); // never ejected: no slow start
    assertThat(s.factor(health, 1, returned - SECOND)).isEqualTo(0.1); // stale "now"
    assertThat(s.factor(health, 1, returned)).isEqualTo(0.1);
    assertThat(s.factor(health, 1, returned + 10 * SECOND)).isCloseTo(0.4, within());
    assertThat(s.factor(health, 1, returned + 30 * SECOND - 1)).isLessThan(1.0);
    assertThat(s.factor(health, 1, returned + 30 * SECOND)).isEqualTo(1.0);
    assertThat(SlowStart.NONE.factor(health, 1, returned)).isEqualTo(1.0);
  }

  @ParameterizedTest
  @ValueSource(doubles = {0.0, -0.5, 1.5, Double.NaN})
  void rejectsABadFloor(double floor) {
    assertThatThrownBy(() -> new SlowStart(SECOND, floor))
        .hasMessage("minFraction : " + floor + " (expected: in (0, 1])");
  }

  private static org.assertj.core.data.Offset<Double> within() {
    return org.assertj.core.data.Offset.offset(1e-9);
  }
}
