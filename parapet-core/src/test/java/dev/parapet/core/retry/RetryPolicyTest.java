package dev.parapet.core.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
  private static final long MS = 1_000_000L;
  private static final long NO_DEADLINE = Long.MAX_VALUE;

  private final ExtraLoadBudget budget = ExtraLoadBudget.sharedDefaults();
  private final RetryPolicy policy = RetryPolicy.withDefaults(RandomSource.seeded(7), budget);

  @Test
  void localRejectionIsNeverRetried() {
    BudgetSlot slot = new BudgetSlot();
    long decision = policy.decide(1, true, RetryAfter.ABSENT, NO_DEADLINE, slot);
    assertThat(RetryRefusal.of(decision)).isEqualTo(RetryRefusal.LOCAL_REJECTION);
    assertThat(slot.isHeld()).isFalse();
    assertThat(budget.retryBudget().activeRetries()).isZero();
  }

  @Test
  void maxAttemptsCountsTheFirstAttempt() {
    RetryPolicy three =
        new RetryPolicy(
            3,
            Duration.ofMillis(25),
            Duration.ofMillis(250),
            Duration.ofMillis(20),
            RandomSource.seeded(1),
            budget);
    BudgetSlot slot = new BudgetSlot();
    assertThat(RetryPolicy.isRetry(three.decide(1, false, RetryAfter.ABSENT, NO_DEADLINE, slot)))
        .isTrue();
    slot.release();
    assertThat(RetryPolicy.isRetry(three.decide(2, false, RetryAfter.ABSENT, NO_DEADLINE, slot)))
        .isTrue();
    slot.release();
    assertThat(RetryRefusal.of(three.decide(3, false, RetryAfter.ABSENT, NO_DEADLINE, slot)))
        .isEqualTo(RetryRefusal.ATTEMPTS_EXHAUSTED);
    // default: 2 attempts, so one retry
    assertThat(RetryRefusal.of(policy.decide(2, false, RetryAfter.ABSENT, NO_DEADLINE, slot)))
        .isEqualTo(RetryRefusal.ATTEMPTS_EXHAUSTED);
  }

  @Test
  void backoffCeilingDoublesUpToMax() {
    assertThat(policy.backoffCeilingNanos(1)).isEqualTo(25 * MS);
    assertThat(policy.backoffCeilingNanos(2)).isEqualTo(50 * MS);
    assertThat(policy.backoffCeilingNanos(3)).isEqualTo(100 * MS);
    assertThat(policy.backoffCeilingNanos(4)).isEqualTo(200 * MS);
    assertThat(policy.backoffCeilingNanos(5)).isEqualTo(250 * MS);
    assertThat(policy.backoffCeilingNanos(64)).isEqualTo(250 * MS);
    assertThat(policy.backoffCeilingNanos(Integer.MAX_VALUE)).isEqualTo(250 * MS);
  }

  @Test
  void backoffIsFullJitterOverTheWholeRange() {
    RetryPolicy p = RetryPolicy.withDefaults(RandomSource.seeded(11), budget);
    long min = Long.MAX_VALUE;
    long max = 0;
    double sum = 0;
    int n = 20_000;
    for (int i = 0; i < n; i++) {
      long d = p.backoffNanos(3); // ceiling 100 ms
      assertThat(d).isBetween(0L, 100 * MS);
      min = Math.min(min, d);
      max = Math.max(max, d);
      sum += d;
    }
    assertThat(min).isLessThan(2 * MS); // full jitter reaches down to zero
    assertThat(max).isGreaterThan(98 * MS);
    assertThat(sum / n).isBetween(47.0 * MS, 53.0 * MS);
  }

  @Test
  void sameSeedSameDelays() {
    RetryPolicy a = RetryPolicy.withDefaults(RandomSource.seeded(99), budget);
    RetryPolicy b = RetryPolicy.withDefaults(RandomSource.seeded(99), budget);
    for (int i = 1; i < 50; i++) {
      assertThat(a.backoffNanos(i)).isEqualTo(b.backoffNanos(i));
    }
  }

  @Test
  void retryAfterIsHonouredBeyondTheBackoffMax() {
    BudgetSlot slot = new BudgetSlot();
    long decision = policy.decide(1, false, 2_000 * MS, NO_DEADLINE, slot);
    assertThat(decision).isEqualTo(2_000 * MS);
    assertThat(slot.isHeld()).isTrue();
  }

  @Test
  void shortRetryAfterDoesNotShortenTheBackoff() {
    RetryPolicy a =
        RetryPolicy.withDefaults(RandomSource.seeded(5), ExtraLoadBudget.sharedDefaults());
    RetryPolicy b =
        RetryPolicy.withDefaults(RandomSource.seeded(5), ExtraLoadBudget.sharedDefaults());
    long withHint = a.decide(1, false, 0, NO_DEADLINE, new BudgetSlot());
    long without = b.decide(1, false, RetryAfter.ABSENT, NO_DEADLINE, new BudgetSlot());
    assertThat(withHint).isEqualTo(without).isBetween(0L, 25 * MS);
  }

  @Test
  void retryThatDoesNotFitTheDeadlineIsRefused() {
    BudgetSlot slot = new BudgetSlot();
    // Retry-After 1 s, but only 1.019 s left: 1.019 - 1 < 20 ms minimum useful
    assertThat(RetryRefusal.of(policy.decide(1, false, 1_000 * MS, 1_019 * MS, slot)))
        .isEqualTo(RetryRefusal.DEADLINE);
    assertThat(slot.isHeld()).isFalse();
    assertThat(budget.retryBudget().activeRetries()).isZero();
    // exactly min_useful left after the delay: allowed
    assertThat(policy.decide(1, false, 1_000 * MS, 1_020 * MS, slot)).isEqualTo(1_000 * MS);
  }

  @Test
  void deadlineAlreadyGoneIsRefusedWithoutOverflow() {
    BudgetSlot slot = new BudgetSlot();
    assertThat(RetryRefusal.of(policy.decide(1, false, RetryAfter.ABSENT, Long.MIN_VALUE, slot)))
        .isEqualTo(RetryRefusal.DEADLINE);
    assertThat(RetryRefusal.of(policy.decide(1, false, RetryAfter.ABSENT, 19 * MS, slot)))
        .isEqualTo(RetryRefusal.DEADLINE);
  }

  @Test
  void fullBudgetRefusesAndLeavesTheSlotFree() {
    for (int i = 0; i < 5; i++) {
      assertThat(budget.tryRetry(new BudgetSlot())).isTrue();
    }
    BudgetSlot slot = new BudgetSlot();
    assertThat(RetryRefusal.of(policy.decide(1, false, RetryAfter.ABSENT, NO_DEADLINE, slot)))
        .isEqualTo(RetryRefusal.BUDGET);
    assertThat(slot.isHeld()).isFalse();
  }

  @Test
  void refusalCodesRoundTrip() {
    for (RetryRefusal r : RetryRefusal.values()) {
      assertThat(r.code()).isNegative();
      assertThat(RetryRefusal.of(r.code())).isEqualTo(r);
      assertThat(RetryPolicy.isRetry(r.code())).isFalse();
    }
    assertThatThrownBy(() -> RetryRefusal.of(5))
        .hasMessage("decision : 5 (expected: one of -1, -2, -3, -4)");
  }

  @Test
  void rejectsBadConfiguration() {
    RandomSource r = RandomSource.seeded(1);
    assertThatThrownBy(() ->
            new RetryPolicy(
                0, Duration.ofMillis(25), Duration.ofMillis(250), Duration.ZERO, r, budget))
        .hasMessage("maxAttempts : 0 (expected: >= 1)");
    assertThatThrownBy(() ->
            new RetryPolicy(
                2, Duration.ofMillis(25), Duration.ofMillis(10), Duration.ZERO, r, budget))
        .hasMessage("maxBackoff : PT0.01S (expected: >= base PT0.025S)");
  }
}
