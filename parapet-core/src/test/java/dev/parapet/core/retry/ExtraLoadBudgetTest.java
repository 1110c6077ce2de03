package dev.parapet.core.retry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.retry.ExtraLoadBudget.Sharing;
import org.junit.jupiter.api.Test;

class ExtraLoadBudgetTest {

  @Test
  void sharedBudgetCountsRetriesAndHedgesTogether() {
    ExtraLoadBudget budget = new ExtraLoadBudget(RetryBudget.withDefaults(), Sharing.SHARED);
    for (int i = 0; i < 3; i++) {
      assertThat(budget.tryHedge(new BudgetSlot())).isTrue();
    }
    assertThat(budget.tryRetry(new BudgetSlot())).isTrue();
    assertThat(budget.tryRetry(new BudgetSlot())).isTrue();
    assertThat(budget.tryRetry(new BudgetSlot())).isFalse(); // 3 hedges + 2 retries = floor 5
    assertThat(budget.tryHedge(new BudgetSlot())).isFalse();
    assertThat(budget.hedgeBudget()).isSameAs(budget.retryBudget());
  }

  @Test
  void separateBudgetsLeaveRetriesAlone() {
    ExtraLoadBudget budget = new ExtraLoadBudget(RetryBudget.withDefaults(), Sharing.SEPARATE);
    for (int i = 0; i < 50; i++) {
      assertThat(budget.tryHedge(new BudgetSlot())).isTrue();
    }
    for (int i = 0; i < 5; i++) {
      assertThat(budget.tryRetry(new BudgetSlot())).isTrue();
    }
    assertThat(budget.tryRetry(new BudgetSlot())).isFalse();
    assertThat(budget.hedgeBudget().activeRetries()).isEqualTo(50);
    assertThat(budget.retryBudget().activeRetries()).isEqualTo(5);
  }

  @Test
  void hedgeSlotReleasesToTheBudgetItCameFrom() {
    ExtraLoadBudget budget = new ExtraLoadBudget(RetryBudget.withDefaults(), Sharing.SEPARATE);
    BudgetSlot slot = new BudgetSlot();
    assertThat(budget.tryHedge(slot)).isTrue();
    assertThat(slot.release()).isTrue();
    assertThat(budget.hedgeBudget().activeRetries()).isZero();
    assertThat(budget.retryBudget().activeRetries()).isZero();
    assertThat(budget.retryBudget().misuses()).isZero();
  }

  @Test
  void requestsWidenTheSharedBudget() {
    ExtraLoadBudget budget = ExtraLoadBudget.sharedDefaults();
    for (int i = 0; i < 50; i++) {
      budget.requestStarted();
    }
    int granted = 0;
    while (budget.tryHedge(new BudgetSlot()) || budget.tryRetry(new BudgetSlot())) {
      granted++;
    }
    assertThat(granted).isEqualTo(10);
    budget.requestFinished();
    assertThat(budget.retryBudget().activeRequests()).isEqualTo(49);
  }
}
