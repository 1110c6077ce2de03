package dev.parapet.core.hedge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.RandomSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class HedgeRateBudgetTest {

  @Test
  void startsEmptyAndEarnsOneHedgePerSevenRequestsAtFifteenPercent() {
    HedgeRateBudget budget = HedgeRateBudget.withDefaults();
    assertThat(budget.tryAcquire()).isFalse();
    for (int i = 0; i < 6; i++) {
      budget.onRequest();
    }
    assertThat(budget.tryAcquire()).as("6 x 0.15 = 0.9").isFalse();
    budget.onRequest();
    assertThat(budget.tryAcquire()).as("7 x 0.15 = 1.05").isTrue();
    assertThat(budget.tryAcquire()).isFalse();
  }

  @Test
  void quietPeriodSavesUpAtMostTheBurst() {
    HedgeRateBudget budget = new HedgeRateBudget(0.15, 3);
    for (int i = 0; i < 10_000; i++) {
      budget.onRequest();
    }
    assertThat(budget.available()).isEqualTo(3);
    int granted = 0;
    while (budget.tryAcquire()) {
      granted++;
    }
    assertThat(granted).isEqualTo(3);
  }

  @Test
  void refundGivesTheHedgeBack() {
    HedgeRateBudget budget = new HedgeRateBudget(1.0, 1);
    budget.onRequest();
    assertThat(budget.tryAcquire()).isTrue();
    budget.refund();
    assertThat(budget.tryAcquire()).isTrue();
  }

  @Test
  void rejectsBadConfiguration() {
    assertThatThrownBy(() -> new HedgeRateBudget(0, 1))
        .hasMessage("ratio : 0.0 (expected: in (0, 1])");
    assertThatThrownBy(() -> new HedgeRateBudget(0.15, 0)).hasMessage("burst : 0 (expected: >= 1)");
  }

  /**
   * Property: decisions equal a reference model in whole percent, and hedges never exceed
   * floor(ratio x requests).
   */
  @Test
  void randomSequencesMatchReferenceAndNeverExceedTheRatio() {
    for (long seed = 1; seed <= 200; seed++) {
      RandomSource random = RandomSource.seeded(seed);
      int percent = 1 + (int) random.nextLong(100);
      int burst = 1 + (int) random.nextLong(20);
      HedgeRateBudget budget = new HedgeRateBudget(percent / 100.0, burst);
      long modelHundredths = 0;
      long requests = 0;
      long hedges = 0;
      for (int step = 0; step < 3_000; step++) {
        if (random.nextDouble() < 0.7) {
          budget.onRequest();
          requests++;
          modelHundredths = Math.min(burst * 100L, modelHundredths + percent);
        } else {
          boolean expected = modelHundredths >= 100;
          boolean granted = budget.tryAcquire();
          assertThat(granted).as("seed %d step %d", seed, step).isEqualTo(expected);
          if (granted) {
            modelHundredths -= 100;
            hedges++;
          }
          assertThat(hedges * 100)
              .as("seed %d step %d: %d hedges for %d requests", seed, step, hedges, requests)
              .isLessThanOrEqualTo(requests * percent);
        }
      }
    }
  }

  @Test
  void concurrentCallersNeverExceedTheRatio() throws InterruptedException {
    HedgeRateBudget budget = new HedgeRateBudget(0.15, 10);
    AtomicLong requests = new AtomicLong();
    AtomicLong hedges = new AtomicLong();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Thread w =
          new Thread(() -> {
            try {
              go.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
            for (int i = 0; i < 100_000; i++) {
              budget.onRequest();
              requests.incrementAndGet();
              if (budget.tryAcquire()) {
                hedges.incrementAndGet();
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
    assertThat(requests.get()).isEqualTo(400_000);
    assertThat(hedges.get()).isLessThanOrEqualTo(60_000).isGreaterThan(59_900);
  }
}
