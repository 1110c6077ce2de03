package dev.parapet.core.balance;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HostHealthTest {

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5})
  void bothEjectsWhenEitherDoesAndSlowStartsFromTheLatestReturn(long t) {
    TestHealth outlier = new TestHealth(3);
    TestHealth checks = new TestHealth(3);
    HostHealth h = HostHealth.both(outlier, checks);
    long g0 = h.generation();
    outlier.eject(0);
    checks.eject(1);
    assertThat(h.isEjected(0)).isTrue();
    assertThat(h.isEjected(1)).isTrue();
    assertThat(h.isEjected(2)).isFalse();
    assertThat(h.generation()).isNotEqualTo(g0);
    outlier.returnAt(0, t);
    assertThat(h.hasReturned(0)).isTrue();
    assertThat(h.returnedAtNanos(0)).isEqualTo(t);
    checks.returnAt(0, t + 10); // across the wrap-around when t is near MAX
    assertThat(h.returnedAtNanos(0)).isEqualTo(t + 10);
    checks.returnAt(2, t + 3);
    assertThat(h.returnedAtNanos(2)).isEqualTo(t + 3);
    assertThat(h.hasReturned(1)).isFalse();
  }
}
