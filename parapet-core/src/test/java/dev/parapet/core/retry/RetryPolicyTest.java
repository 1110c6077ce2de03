package dev.parapet.core.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
        .hasMessage("decision : 5 (expected: one of -1 to -6)");
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

  /**
   * Property: over random failures the decision equals a reference written from the rules, and
   * retries in flight never exceed the budget.
   */
  @Test
  void randomFailuresMatchTheRules() {
    for (long seed = 1; seed <= 100; seed++) {
      RandomSource random = RandomSource.seeded(seed);
      RandomSource jitter = RandomSource.seeded(seed * 31);
      RandomSource modelJitter = RandomSource.seeded(seed * 31);
      int attempts = 1 + (int) random.nextLong(4);
      RetryBudget retryBudget = new RetryBudget(0.2, (int) random.nextLong(4));
      RetryPolicy p =
          new RetryPolicy(
              attempts,
              Duration.ofMillis(25),
              Duration.ofMillis(250),
              Duration.ofMillis(20),
              jitter,
              new ExtraLoadBudget(retryBudget, ExtraLoadBudget.Sharing.SHARED));
      List<BudgetSlot> held = new ArrayList<>();
      for (int step = 0; step < 1_000; step++) {
        if (random.nextLong(3) == 0) {
          retryBudget.requestStarted();
        }
        if (!held.isEmpty() && random.nextLong(2) == 0) {
          held.remove((int) random.nextLong(held.size())).release();
        }
        int made = 1 + (int) random.nextLong(5);
        boolean local = random.nextLong(5) == 0;
        long retryAfter = random.nextLong(3) == 0 ? random.nextLong(400) * MS : RetryAfter.ABSENT;
        long remaining = random.nextLong(600) * MS - 50 * MS;

        long expected;
        if (local) {
          expected = RetryRefusal.LOCAL_REJECTION.code();
        } else if (made >= attempts) {
          expected = RetryRefusal.ATTEMPTS_EXHAUSTED.code();
        } else {
          long ceiling = Math.min(250 * MS, 25 * MS << Math.min(made - 1, 20));
          long delay = Math.max(modelJitter.nextLong(ceiling + 1), retryAfter);
          if (remaining - 20 * MS < delay) {
            expected = RetryRefusal.DEADLINE.code();
          } else if (!RetryBudget.allows(
              retryBudget.activeRequests(),
              retryBudget.activeRetries(),
              0.2,
              retryBudget.minConcurrency())) {
            expected = RetryRefusal.BUDGET.code();
          } else {
            expected = delay;
          }
        }
        BudgetSlot slot = new BudgetSlot();
        long decision = p.decide(made, local, retryAfter, remaining, slot);
        assertThat(decision).as("seed %d step %d", seed, step).isEqualTo(expected);
        assertThat(slot.isHeld()).isEqualTo(RetryPolicy.isRetry(decision));
        if (slot.isHeld()) {
          held.add(slot);
        }
        assertThat(retryBudget.activeRetries())
            .as("seed %d step %d", seed, step)
            .isEqualTo(held.size())
            .isLessThanOrEqualTo(
                Math.max(
                    retryBudget.minConcurrency(), (long) (retryBudget.activeRequests() * 0.2)));
      }
    }
  }
}
