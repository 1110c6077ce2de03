package dev.parapet.core.hedge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.retry.BudgetSlot;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.retry.ExtraLoadBudget.Sharing;
import dev.parapet.core.retry.RetryBudget;
import dev.parapet.core.time.ManualTicker;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HedgePolicyTest {
  private static final long MS = 1_000_000L;

  private static void fill(RollingLatencyHistogram h, int samples, long latencyUnit, long now) {
    for (int i = 1; i <= samples; i++) {
      h.record(i * latencyUnit, now);
    }
  }

  @Test
  void noHedgeUntilEnoughSamples() {
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(0);
    HedgePolicy policy = HedgePolicy.withDefaults(h, ExtraLoadBudget.sharedDefaults());
    fill(h, 19, MS * 10, 0);
    assertThat(policy.delayNanos(0)).isEqualTo(HedgePolicy.NO_HEDGE);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 50 * MS})
  void delayIsRollingP95AndRefreshesPeriodically(long start) {
    ManualTicker ticker = new ManualTicker(start);
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(start);
    HedgePolicy policy = HedgePolicy.withDefaults(h, ExtraLoadBudget.sharedDefaults());
    fill(h, 100, 2 * MS, ticker.read()); // 2 .. 200 ms, p95 = 190 ms
    long first = policy.delayNanos(ticker.read());
    assertThat(first).isBetween(187 * MS, 193 * MS);

    fill(h, 100, 4 * MS, ticker.read()); // 200 samples: rank 190 is the 11th largest, 360 ms
    ticker.advance(99 * MS);
    assertThat(policy.delayNanos(ticker.read())).as("cached until refresh").isEqualTo(first);
    ticker.advance(1 * MS); // crosses Long.MAX_VALUE for the second start
    assertThat(policy.delayNanos(ticker.read())).isBetween(354 * MS, 366 * MS);
  }

  @Test
  void delayHasAFloor() {
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(0);
    HedgePolicy policy = HedgePolicy.withDefaults(h, ExtraLoadBudget.sharedDefaults());
    fill(h, 100, 50_000, 0); // 0.05 .. 5 ms
    assertThat(policy.delayNanos(0)).isEqualTo(20 * MS);
    assertThat(HedgePolicy.delayFor(5 * MS, 20 * MS)).isEqualTo(20 * MS);
    assertThat(HedgePolicy.delayFor(35 * MS, 20 * MS)).isEqualTo(35 * MS);
    assertThat(HedgePolicy.delayFor(RollingLatencyHistogram.NO_DATA, 20 * MS))
        .isEqualTo(HedgePolicy.NO_HEDGE);
  }

  @Test
  void atMostOneHedgePerRequest() {
    HedgePolicy policy = earnedPolicy(ExtraLoadBudget.sharedDefaults(), 100);
    BudgetSlot slot = new BudgetSlot();
    assertThat(policy.tryHedge(true, 0, slot)).isEqualTo(HedgeDecision.HEDGE);
    assertThat(policy.tryHedge(true, 1, new BudgetSlot())).isEqualTo(HedgeDecision.ALREADY_HEDGED);
  }

  @Test
  void neverWhileTheBreakerIsNotClosed() {
    ExtraLoadBudget extra = ExtraLoadBudget.sharedDefaults();
    HedgePolicy policy = earnedPolicy(extra, 100);
    long before = policy.rateBudget().available();
    BudgetSlot slot = new BudgetSlot();
    assertThat(policy.tryHedge(false, 0, slot)).isEqualTo(HedgeDecision.BREAKER_NOT_CLOSED);
    assertThat(slot.isHeld()).isFalse();
    assertThat(policy.rateBudget().available()).isEqualTo(before);
    assertThat(extra.retryBudget().activeRetries()).isZero();
  }

  @Test
  void hedgesCappedAtFifteenPercentOfRequests() {
    ExtraLoadBudget extra = new ExtraLoadBudget(RetryBudget.withDefaults(), Sharing.SEPARATE);
    HedgePolicy policy = earnedPolicy(extra, 0);
    int hedges = 0;
    for (int request = 0; request < 1_000; request++) {
      policy.onRequest();
      BudgetSlot slot = new BudgetSlot();
      if (policy.tryHedge(true, 0, slot).isHedge()) { // every request wants to hedge
        hedges++;
        slot.release();
      }
    }
    assertThat(hedges).isEqualTo(150);
  }

  @Test
  void sharedBudgetRefusalRefundsTheRateToken() {
    ExtraLoadBudget extra = ExtraLoadBudget.sharedDefaults(); // floor 5 with no counted requests
    HedgePolicy policy = earnedPolicy(extra, 100); // 10 hedges saved up (burst)
    for (int i = 0; i < 5; i++) {
      assertThat(extra.tryRetry(new BudgetSlot())).isTrue(); // retries fill the shared budget
    }
    long available = policy.rateBudget().available();
    BudgetSlot slot = new BudgetSlot();
    assertThat(policy.tryHedge(true, 0, slot)).isEqualTo(HedgeDecision.EXTRA_LOAD_EXHAUSTED);
    assertThat(policy.rateBudget().available()).isEqualTo(available);
    assertThat(slot.isHeld()).isFalse();
  }

  @Test
  void separateBudgetIgnoresRetries() {
    ExtraLoadBudget extra = new ExtraLoadBudget(RetryBudget.withDefaults(), Sharing.SEPARATE);
    HedgePolicy policy = earnedPolicy(extra, 100);
    for (int i = 0; i < 5; i++) {
      assertThat(extra.tryRetry(new BudgetSlot())).isTrue();
    }
    BudgetSlot slot = new BudgetSlot();
    assertThat(policy.tryHedge(true, 0, slot)).isEqualTo(HedgeDecision.HEDGE);
    assertThat(slot.release()).isTrue();
  }

  @Test
  void rateExhaustedWhenNoRequestsPaidForIt() {
    HedgePolicy policy = earnedPolicy(ExtraLoadBudget.sharedDefaults(), 6);
    assertThat(policy.tryHedge(true, 0, new BudgetSlot())).isEqualTo(HedgeDecision.RATE_EXHAUSTED);
  }

  @Test
  void rejectsBadConfiguration() {
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(0);
    ExtraLoadBudget extra = ExtraLoadBudget.sharedDefaults();
    HedgeRateBudget rate = HedgeRateBudget.withDefaults();
    assertThatThrownBy(() ->
            new HedgePolicy(h, 0, Duration.ofMillis(20), 20, Duration.ofMillis(100), rate, extra))
        .hasMessage("quantile : 0.0 (expected: in (0, 1])");
    assertThatThrownBy(() ->
            new HedgePolicy(h, 0.95, Duration.ofMillis(20), 0, Duration.ofMillis(100), rate, extra))
        .hasMessage("minSamples : 0 (expected: >= 1)");
  }

  private static HedgePolicy earnedPolicy(ExtraLoadBudget extra, int requests) {
    HedgePolicy policy = HedgePolicy.withDefaults(RollingLatencyHistogram.withDefaults(0), extra);
    for (int i = 0; i < requests; i++) {
      policy.onRequest();
    }
    return policy;
  }
}
