package dev.parapet.core.deadline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.ManualTicker;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DeadlineTest {
  private static final long MS = 1_000_000L;

  @ParameterizedTest
  @ValueSource(longs = {0L, -1L, Long.MAX_VALUE - 100 * MS, Long.MIN_VALUE})
  void remainingCountsDownAcrossTheWrap(long start) {
    ManualTicker ticker = new ManualTicker(start);
    Deadline deadline = Deadline.after(300 * MS, ticker.read());
    assertThat(deadline.remainingNanos(ticker.read())).isEqualTo(300 * MS);
    ticker.advance(200 * MS); // crosses Long.MAX_VALUE for the third start
    assertThat(deadline.remainingNanos(ticker.read())).isEqualTo(100 * MS);
    assertThat(deadline.isExpired(ticker.read())).isFalse();
    ticker.advance(100 * MS);
    assertThat(deadline.isExpired(ticker.read())).isTrue();
    ticker.advance(50 * MS);
    assertThat(deadline.remainingNanos(ticker.read())).isEqualTo(-50 * MS);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5, Long.MIN_VALUE + 5})
  void hugeBudgetIsClampedAndStillInTheFuture(long now) {
    Deadline deadline = Deadline.after(Long.MAX_VALUE, now);
    assertThat(deadline.remainingNanos(now)).isEqualTo(Deadline.MAX_BUDGET_NANOS);
    assertThat(deadline.isExpired(now + 1_000 * MS)).isFalse();
  }

  @ParameterizedTest
  @ValueSource(longs = {-1L, Long.MIN_VALUE, 0L})
  void negativeOrZeroBudgetIsDueAtOnce(long budget) {
    Deadline deadline = Deadline.after(budget, 42);
    assertThat(deadline.remainingNanos(42)).isZero();
    assertThat(deadline.isExpired(42)).isTrue();
    assertThat(deadline.expiresAtNanos()).isEqualTo(42);
  }
}
