package dev.parapet.core.breaker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Many threads hammering one breaker. These tests assert invariants, never timing: they pass on a
 * loaded two-core machine, and fail if the probe budget or exactly-once completion ever breaks.
 */
class BreakerConcurrencyTest {
  private static final int THREADS = 4;
  private static ExecutorService pool;

  @BeforeAll
  static void startPool() {
    pool = Executors.newFixedThreadPool(THREADS);
  }

  @AfterAll
  static void stopPool() {
    pool.shutdownNow();
  }

  private static void runTogether(Runnable task) throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> futures = new ArrayList<>();
    for (int i = 0; i < THREADS; i++) {
      futures.add(
          pool.submit(() -> {
            go.await();
            task.run();
            return null;
          }));
    }
    go.countDown();
    for (Future<?> f : futures) {
      f.get();
    }
  }

  @Test
  void neverMoreThanOneProbeInFlightNorMoreThanTheBudget() throws Exception {
    BreakerPolicy policy =
        BreakerPolicy.builder()
            .open(Duration.ofSeconds(30), Duration.ofMinutes(5), 0.0)
            .halfOpen(3, Duration.ZERO, 3, Duration.ofSeconds(1))
            .ramp(0.05, Duration.ZERO)
            .build();
    for (int round = 0; round < 40; round++) {
      boolean failSome = round % 2 == 1;
      CircuitBreaker b =
          new CircuitBreaker(
              Harness.KEY, policy, RandomSource.seeded(round), BreakerListener.NONE, 0);
      for (int i = 0; i < 3; i++) {
        b.tryAcquire(0).onOutcome(Outcome.CONNECT_FAILURE, 0);
      }
      assertThat(b.state()).isEqualTo(State.OPEN);
      long now = 30_000_000_000L; // time stands still: the only limits are the probe rules
      AtomicInteger inFlight = new AtomicInteger();
      AtomicInteger maxInFlight = new AtomicInteger();
      LongAdder probes = new LongAdder();
      runTogether(() -> {
        Permit p = new Permit();
        for (int i = 0; i < 20_000; i++) {
          Decision d = b.tryAcquire(p, now);
          if (d == Decision.PROBE) {
            probes.increment();
            int n = inFlight.incrementAndGet();
            maxInFlight.accumulateAndGet(n, Math::max);
            Thread.onSpinWait();
            inFlight.decrementAndGet();
            boolean fail = failSome && ThreadLocalRandom.current().nextInt(3) == 0;
            p.onOutcome(fail ? Outcome.TIMEOUT : Outcome.SUCCESS, now);
          } else if (d.isPermitted()) {
            p.onOutcome(Outcome.SUCCESS, now);
          }
        }
      });
      assertThat(maxInFlight.get()).as("round %d", round).isEqualTo(1);
      assertThat(probes.sum()).as("round %d", round).isBetween(1L, 3L);
      assertThat(b.probesSentCount()).isEqualTo(probes.sum());
      if (!failSome) {
        assertThat(probes.sum()).isEqualTo(3);
        assertThat(b.state()).isEqualTo(State.CLOSED);
      } else {
        assertThat(b.state()).isIn(State.CLOSED, State.OPEN);
      }
      assertThat(b.misuseCount()).isZero();
    }
  }

  @Test
  void racingCompletionsCountOnceAndTheRestAsMisuse() throws Exception {
    BreakerPolicy policy = BreakerPolicy.builder().minRequests(1_000_000).build();
    CircuitBreaker b =
        new CircuitBreaker(Harness.KEY, policy, RandomSource.seeded(1), BreakerListener.NONE, 0);
    int rounds = 300;
    LongAdder wins = new LongAdder();
    for (int round = 0; round < rounds; round++) {
      Permit p = new Permit();
      assertThat(b.tryAcquire(p, 0)).isEqualTo(Decision.PERMITTED);
      runTogether(() -> {
        if (p.onOutcome(Outcome.FAILURE_STATUS, 0)) {
          wins.increment();
        }
      });
    }
    assertThat(wins.sum()).isEqualTo(rounds);
    assertThat(b.misuseCount()).isEqualTo((long) rounds * (THREADS - 1));
    BreakerSnapshot s = b.snapshot(0);
    assertThat(s.calls()).isEqualTo(rounds);
    assertThat(s.failureRate()).isEqualTo(1.0);
  }

  @Test
  void concurrentClosedTrafficIsCountedExactly() throws Exception {
    BreakerPolicy policy = BreakerPolicy.builder().minRequests(1_000_000).build();
    CircuitBreaker b =
        new CircuitBreaker(Harness.KEY, policy, RandomSource.seeded(1), BreakerListener.NONE, 0);
    int each = 50_000;
    runTogether(() -> {
      Permit p = new Permit();
      for (int i = 0; i < each; i++) {
        b.tryAcquire(p, 5_000_000L);
        p.onOutcome(i % 10 == 0 ? Outcome.SLOW : Outcome.SUCCESS, 5_000_000L);
      }
    });
    BreakerSnapshot s = b.snapshot(5_000_000L);
    assertThat(s.calls()).isEqualTo((long) THREADS * each);
    assertThat(s.slowRate()).isEqualTo(0.1);
  }
}
