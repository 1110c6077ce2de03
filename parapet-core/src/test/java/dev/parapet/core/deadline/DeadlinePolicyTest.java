package dev.parapet.core.deadline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DeadlinePolicyTest {
  private static final long MS = 1_000_000L;
  private final DeadlinePolicy policy = DeadlinePolicy.withDefaults();

  @Test
  void requestBudgetIsTheSmallerOfRouteAndHeader() {
    assertThat(DeadlinePolicy.requestBudgetNanos(8_000 * MS, DeadlineHeader.ABSENT))
        .isEqualTo(8_000 * MS);
    assertThat(DeadlinePolicy.requestBudgetNanos(8_000 * MS, 5_000 * MS)).isEqualTo(5_000 * MS);
    assertThat(DeadlinePolicy.requestBudgetNanos(3_000 * MS, 5_000 * MS)).isEqualTo(3_000 * MS);
    assertThat(DeadlinePolicy.requestBudgetNanos(3_000 * MS, 0)).isZero();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 1_000 * MS})
  void attemptTimeoutIsMinOfOriginTimeoutAndRemainingMinusReserve(long start) {
    ManualTicker ticker = new ManualTicker(start);
    long expiresAt = Deadline.expiresAt(3_000 * MS, ticker.read());
    // plenty left: the origin's own timeout rules
    assertThat(policy.attemptTimeoutNanos(expiresAt, 1_000 * MS, ticker.read()))
        .isEqualTo(1_000 * MS);
    assertThat(policy.usableNanos(expiresAt, ticker.read())).isEqualTo(2_950 * MS);
    ticker.advanceMillis(2_500); // crosses Long.MAX_VALUE for the second start
    // 500 ms left, 50 ms reserved
    assertThat(policy.attemptTimeoutNanos(expiresAt, 1_000 * MS, ticker.read()))
        .isEqualTo(450 * MS);
    ticker.advanceMillis(430); // 70 ms left, 20 usable: exactly min_useful
    assertThat(policy.attemptTimeoutNanos(expiresAt, 1_000 * MS, ticker.read())).isEqualTo(20 * MS);
    assertThat(policy.isExhausted(expiresAt, ticker.read())).isFalse();
    ticker.advance(1); // below min_useful: answer 504, do not call the origin
    assertThat(policy.attemptTimeoutNanos(expiresAt, 1_000 * MS, ticker.read()))
        .isEqualTo(DeadlinePolicy.EXHAUSTED);
    assertThat(policy.isExhausted(expiresAt, ticker.read())).isTrue();
    ticker.advanceMillis(10_000); // long past
    assertThat(policy.attemptTimeoutNanos(expiresAt, 1_000 * MS, ticker.read()))
        .isEqualTo(DeadlinePolicy.EXHAUSTED);
  }

  @Test
  void deadlineFarInThePastNeverWrapsToPlentyOfTime() {
    long expiresAt = Long.MIN_VALUE + 10;
    long now = 0; // remaining = MIN + 10: minus the reserve would wrap to a huge positive
    assertThat(policy.usableNanos(expiresAt, now)).isEqualTo(Long.MIN_VALUE);
    assertThat(policy.attemptTimeoutNanos(expiresAt, 1_000 * MS, now))
        .isEqualTo(DeadlinePolicy.EXHAUSTED);
  }

  @Test
  void incomingHeaderOfZeroFailsFast() {
    long budget = DeadlinePolicy.requestBudgetNanos(8_000 * MS, DeadlineHeader.parseNanos("0"));
    long expiresAt = Deadline.expiresAt(budget, 7);
    assertThat(policy.attemptTimeoutNanos(expiresAt, 3_000 * MS, 7))
        .isEqualTo(DeadlinePolicy.EXHAUSTED);
  }

  @Test
  void garbageHeaderLeavesTheRouteTimeout() {
    long budget = DeadlinePolicy.requestBudgetNanos(8_000 * MS, DeadlineHeader.parseNanos("-1"));
    assertThat(budget).isEqualTo(8_000 * MS);
  }

  /** Property: forwarding the attempt timeout makes each tier's budget strictly smaller. */
  @Test
  void tiersShrinkByConstruction() {
    long seed = 23;
    RandomSource random = RandomSource.seeded(seed);
    for (int i = 0; i < 2_000; i++) {
      long now = random.nextLong(Long.MAX_VALUE) - random.nextLong(Long.MAX_VALUE);
      long budget =
          DeadlinePolicy.requestBudgetNanos(
              (1 + random.nextLong(10_000)) * MS, DeadlineHeader.ABSENT);
      for (int tier = 0; tier < 4; tier++) {
        long expiresAt = Deadline.expiresAt(budget, now);
        long originTimeout = (1 + random.nextLong(10_000)) * MS;
        long attempt = policy.attemptTimeoutNanos(expiresAt, originTimeout, now);
        if (attempt == DeadlinePolicy.EXHAUSTED) {
          break;
        }
        assertThat(attempt).as("seed %d", seed).isLessThanOrEqualTo(budget - policy.reserveNanos());
        long forwarded = DeadlineHeader.parseNanos(DeadlineHeader.format(attempt));
        long next =
            DeadlinePolicy.requestBudgetNanos((1 + random.nextLong(10_000)) * MS, forwarded);
        assertThat(next).as("seed %d tier %d", seed, tier).isLessThan(budget);
        budget = next;
        now += random.nextLong(5 * MS); // network hop
      }
    }
  }

  @Test
  void rejectsBadConfiguration() {
    assertThatThrownBy(() -> new DeadlinePolicy(Duration.ofMillis(-1), Duration.ofMillis(20)))
        .hasMessage("reserve : PT-0.001S (expected: >= 0)");
    assertThatThrownBy(() -> new DeadlinePolicy(Duration.ofMillis(50), Duration.ZERO))
        .hasMessage("minUseful : PT0S (expected: > 0)");
  }
}
