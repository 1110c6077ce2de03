package dev.parapet.core.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.RandomSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RetryBudgetTest {

  @ParameterizedTest(name = "{0} requests, {1} retries -> {2}")
  @CsvSource({
    "0, 0, true",
    "0, 4, true",
    "0, 5, false", // floor of 5 with no traffic
    "24, 4, true",
    "24, 5, false", // 20 % of 24 = 4.8 -> floor 5 still rules
    "100, 19, true",
    "100, 20, false", // 20 % of 100 = 20
    "101, 20, false",
    "105, 20, true",
    "1000, 199, true",
    "1000, 200, false"
  })
  void ruleIsMaxOfFloorAndRatio(long requests, long retries, boolean allowed) {
    assertThat(RetryBudget.allows(requests, retries, 0.20, 5)).isEqualTo(allowed);
  }

  @Test
  void percentagesAreExactNotFloatingPoint() {
    // 0.29 * 100 is 28.999999999999996 in doubles: the budget still allows 29
    assertThat(RetryBudget.allows(100, 28, 0.29, 0)).isTrue();
    assertThat(RetryBudget.allows(100, 29, 0.29, 0)).isFalse();
  }

  @Test
  void floorAppliesWithoutTraffic() {
    RetryBudget budget = RetryBudget.withDefaults();
    List<BudgetSlot> slots = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      BudgetSlot slot = new BudgetSlot();
      assertThat(budget.tryAcquire(slot)).isTrue();
      slots.add(slot);
    }
    BudgetSlot sixth = new BudgetSlot();
    assertThat(budget.tryAcquire(sixth)).isFalse();
    assertThat(sixth.isHeld()).isFalse();
    assertThat(budget.activeRetries()).isEqualTo(5);
    assertThat(slots.get(0).release()).isTrue();
    assertThat(budget.tryAcquire(sixth)).isTrue();
  }

  @Test
  void ratioAppliesWithTraffic() {
    RetryBudget budget = RetryBudget.withDefaults();
    for (int i = 0; i < 100; i++) {
      budget.requestStarted();
    }
    int granted = 0;
    while (budget.tryAcquire(new BudgetSlot())) {
      granted++;
    }
    assertThat(granted).isEqualTo(20);
    assertThat(budget.activeRequests()).isEqualTo(100);
  }

  @Test
  void secondReleaseIsANoOpCountedAsMisuse() {
    RetryBudget budget = RetryBudget.withDefaults();
    BudgetSlot slot = new BudgetSlot();
    assertThat(budget.tryAcquire(slot)).isTrue();
    assertThat(slot.release()).isTrue();
    assertThat(slot.release()).isFalse();
    assertThat(budget.activeRetries()).isZero();
    assertThat(budget.misuses()).isEqualTo(1);
  }

  @Test
  void acquireOnAHeldSlotIsRefusedAndCounted() {
    RetryBudget budget = RetryBudget.withDefaults();
    BudgetSlot slot = new BudgetSlot();
    assertThat(budget.tryAcquire(slot)).isTrue();
    assertThat(budget.tryAcquire(slot)).isFalse();
    assertThat(budget.activeRetries()).isEqualTo(1);
    assertThat(budget.misuses()).isEqualTo(1);
    assertThat(slot.release()).isTrue();
    assertThat(budget.activeRetries()).isZero();
  }

  @Test
  void unmatchedRequestFinishedNeverGoesNegative() {
    RetryBudget budget = RetryBudget.withDefaults();
    budget.requestFinished();
    assertThat(budget.activeRequests()).isZero();
    assertThat(budget.misuses()).isEqualTo(1);
    budget.requestStarted();
    assertThat(budget.activeRequests()).isEqualTo(1);
  }

  @Test
  void slotIsReusableAcrossBudgets() {
    RetryBudget a = RetryBudget.withDefaults();
    RetryBudget b = RetryBudget.withDefaults();
    BudgetSlot slot = new BudgetSlot();
    assertThat(a.tryAcquire(slot)).isTrue();
    assertThat(slot.release()).isTrue();
    assertThat(b.tryAcquire(slot)).isTrue();
    assertThat(b.activeRetries()).isEqualTo(1);
    assertThat(a.activeRetries()).isZero();
  }

  @Test
  void rejectsBadConfiguration() {
    assertThatThrownBy(() -> new RetryBudget(1.5, 5))
        .hasMessage("ratio : 1.5 (expected: in [0, 1])");
    assertThatThrownBy(() -> new RetryBudget(0.2, -1))
        .hasMessage("minConcurrency : -1 (expected: >= 0)");
  }

  /** Property: same decisions as a plain reference model, and never over budget when granted. */
  @Test
  void randomSequencesMatchReferenceAndNeverExceedBudget() {
    for (long seed = 1; seed <= 200; seed++) {
      RandomSource random = RandomSource.seeded(seed);
      long percent = random.nextLong(101);
      int min = (int) random.nextLong(8);
      RetryBudget budget = new RetryBudget(percent / 100.0, min);
      long modelRequests = 0;
      long modelRetries = 0;
      List<BudgetSlot> held = new ArrayList<>();
      for (int step = 0; step < 2_000; step++) {
        int op = (int) random.nextLong(5);
        if (op == 0) {
          budget.requestStarted();
          modelRequests++;
        } else if (op == 1) {
          budget.requestFinished();
          modelRequests = Math.max(0, modelRequests - 1);
        } else if (op == 2 || op == 3) {
          long limit = Math.max(min, modelRequests * percent / 100); // exact, in whole percent
          boolean expected = modelRetries + 1 <= limit;
          BudgetSlot slot = new BudgetSlot();
          boolean granted = budget.tryAcquire(slot);
          assertThat(granted)
              .as("seed %d step %d requests %d retries %d", seed, step, modelRequests, modelRetries)
              .isEqualTo(expected);
          if (granted) {
            modelRetries++;
            held.add(slot);
            assertThat(modelRetries)
                .as("seed %d step %d budget exceeded", seed, step)
                .isLessThanOrEqualTo(limit);
          }
        } else if (!held.isEmpty()) {
          BudgetSlot slot = held.remove((int) random.nextLong(held.size()));
          assertThat(slot.release()).isTrue();
          modelRetries--;
          if (random.nextLong(4) == 0) {
            assertThat(slot.release()).as("seed %d double release", seed).isFalse();
          }
        }
        assertThat(budget.activeRetries())
            .as("seed %d step %d", seed, step)
            .isEqualTo(modelRetries);
        assertThat(budget.activeRequests())
            .as("seed %d step %d", seed, step)
            .isEqualTo(modelRequests);
      }
    }
  }

  /**
   * Stress: concurrent callers never hold more slots than the budget allows. Requests are fixed
   * during the race, so the limit is known (max(3, 20 % of 10) = 3); {@code inUse} is raised after
   * a grant and lowered before the release, so it never over-states what the budget granted. Each
   * thread tries to hold two slots at once, so two threads together ask for four: the limit bites.
   */
  @Test
  void concurrentCallersNeverExceedTheBudget() throws InterruptedException {
    RetryBudget budget = new RetryBudget(0.20, 3);
    for (int i = 0; i < 10; i++) {
      budget.requestStarted();
    }
    int threads = 4;
    AtomicInteger inUse = new AtomicInteger();
    AtomicInteger maxInUse = new AtomicInteger();
    AtomicInteger maxCounted = new AtomicInteger();
    AtomicLong grants = new AtomicLong();
    AtomicLong refusals = new AtomicLong();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(() -> {
            BudgetSlot[] slots = {new BudgetSlot(), new BudgetSlot()};
            try {
              go.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
            for (int i = 0; i < 100_000; i++) {
              for (BudgetSlot slot : slots) {
                if (budget.tryAcquire(slot)) {
                  grants.incrementAndGet();
                  maxInUse.accumulateAndGet(inUse.incrementAndGet(), Math::max);
                } else {
                  refusals.incrementAndGet();
                }
              }
              for (BudgetSlot slot : slots) {
                if (slot.isHeld()) {
                  inUse.decrementAndGet();
                  slot.release();
                }
              }
            }
          });
      w.start();
      workers.add(w);
    }
    go.countDown();
    for (Thread w : workers) {
      w.join();
    }
    assertThat(maxInUse.get()).isLessThanOrEqualTo(3);
    assertThat(maxCounted.get()).isLessThanOrEqualTo(3);
    assertThat(grants.get()).isPositive();
    assertThat(refusals.get())
        .as("the budget was never full: the test proved nothing")
        .isPositive();
    assertThat(budget.activeRetries()).isZero();
    assertThat(budget.misuses()).isZero();
  }

  /** Two threads releasing the same slot at once: exactly one wins, the other is misuse. */
  @Test
  void racingReleasesGiveBackExactlyOnce() throws Exception {
    RetryBudget budget = RetryBudget.withDefaults();
    BudgetSlot slot = new BudgetSlot();
    int rounds = 2_000;
    CyclicBarrier start = new CyclicBarrier(3);
    CyclicBarrier end = new CyclicBarrier(3);
    AtomicInteger wins = new AtomicInteger();
    Runnable releaser =
        () -> {
          try {
            for (int i = 0; i < rounds; i++) {
              start.await();
              if (slot.release()) {
                wins.incrementAndGet();
              }
              end.await();
            }
          } catch (InterruptedException | BrokenBarrierException e) {
            Thread.currentThread().interrupt();
          }
        };
    Thread a = new Thread(releaser);
    Thread b = new Thread(releaser);
    a.start();
    b.start();
    for (int i = 0; i < rounds; i++) {
      assertThat(budget.tryAcquire(slot)).isTrue();
      start.await();
      end.await();
      assertThat(budget.activeRetries()).as("round %d", i).isZero();
    }
    a.join();
    b.join();
    assertThat(wins.get()).isEqualTo(rounds);
    assertThat(budget.misuses()).isEqualTo(rounds);
  }
}
