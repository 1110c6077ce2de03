package dev.parapet.core.limit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.RandomSource;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Several threads hammer one gate. Invariants only, never timing: bounded by iterations, so it
 * finishes on a loaded two-core machine and cannot flake on speed.
 */
class ConcurrencyGateStressTest {
  private static final int THREADS = 4;
  private static final int ITERATIONS = 200_000;
  private static final int PERMITS_PER_THREAD = 6;

  @Test
  void fixedLimitIsNeverExceeded() throws Exception {
    int limit = 5;
    Result r = hammer(new ConcurrencyGate(FixedLimit.of(limit)), 11L);
    assertThat(r.highWater.get()).as("high-water mark").isLessThanOrEqualTo(limit);
    assertThat(r.highWater.get()).as("the test did reach the limit").isEqualTo(limit);
  }

  @ParameterizedTest
  @ValueSource(strings = {"aimd", "vegas", "gradient2"})
  void movingLimitIsNeverExceeded(String name) throws Exception {
    // The limit moves between 2 and 8 on samples while other threads acquire.
    LimitAlgorithm algorithm =
        name.equals("aimd")
            ? new AimdLimit(4, 2, 8, 0.5, 1_000L)
            : LimitAlgorithm.named(name, 4, 2, 8, RandomSource.seeded(5));
    ConcurrencyGate gate = new ConcurrencyGate(algorithm);
    Result r = hammer(gate, 29L);
    assertThat(r.highWater.get()).isLessThanOrEqualTo(8);
    assertThat(r.overLimit.get()).as("acquires that saw inflight above the limit").isZero();
  }

  @Test
  void racingCompletionsCompleteExactlyOnce() throws Exception {
    ConcurrencyGate gate = new ConcurrencyGate(FixedLimit.of(1));
    Permit permit = new Permit();
    CyclicBarrier barrier = new CyclicBarrier(2);
    AtomicInteger wins = new AtomicInteger();
    int rounds = 2_000;
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Runnable racer =
        () -> {
          try {
            for (int i = 0; i < rounds; i++) {
              barrier.await();
              if (permit.onSuccess(i)) {
                wins.incrementAndGet();
              }
              barrier.await();
            }
          } catch (Throwable t) {
            failure.set(t);
          }
        };
    Thread other = new Thread(racer);
    other.start();
    // This thread re-arms between rounds: the other racer waits at the second barrier.
    Thread self =
        new Thread(() -> {
          try {
            for (int i = 0; i < rounds; i++) {
              if (!gate.tryAcquire(permit, i)) {
                throw new AssertionError("slot leaked in round " + i);
              }
              barrier.await();
              if (permit.onDropped(i)) {
                wins.incrementAndGet();
              }
              barrier.await();
            }
          } catch (Throwable t) {
            failure.set(t);
          }
        });
    self.start();
    self.join();
    other.join();
    assertThat(failure.get()).isNull();
    assertThat(wins.get()).isEqualTo(rounds);
    assertThat(gate.misuseCount()).isEqualTo(rounds);
    assertThat(gate.inflight()).isZero();
  }

  private record Result(AtomicInteger highWater, AtomicLong overLimit) {}

  private static Result hammer(ConcurrencyGate gate, long seed) throws Exception {
    AtomicInteger holders = new AtomicInteger();
    AtomicInteger highWater = new AtomicInteger();
    AtomicLong overLimit = new AtomicLong();
    AtomicLong acquired = new AtomicLong();
    AtomicLong completed = new AtomicLong();
    AtomicLong doubleCompletions = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CyclicBarrier start = new CyclicBarrier(THREADS);
    Thread[] threads = new Thread[THREADS];
    for (int t = 0; t < THREADS; t++) {
      long threadSeed = seed * 31 + t;
      threads[t] =
          new Thread(() -> {
            SplittableRandom random = new SplittableRandom(threadSeed);
            Permit[] permits = new Permit[PERMITS_PER_THREAD];
            for (int i = 0; i < permits.length; i++) {
              permits[i] = new Permit();
            }
            try {
              start.await();
              for (int i = 0; i < ITERATIONS; i++) {
                Permit p = permits[random.nextInt(permits.length)];
                long now = i;
                if (!p.isActive()) {
                  if (gate.tryAcquire(p, now)) {
                    acquired.incrementAndGet();
                    // holders <= the gate's inflight at every instant: it goes up after the
                    // gate's increment and down before the gate's decrement.
                    int h = holders.incrementAndGet();
                    highWater.accumulateAndGet(h, Math::max);
                    if (gate.inflight() > Math.max(gate.limit(), 8)) {
                      overLimit.incrementAndGet();
                    }
                  }
                } else {
                  holders.decrementAndGet();
                  int kind = random.nextInt(3);
                  boolean done =
                      kind == 0
                          ? p.onSuccess(now + random.nextInt(3_000))
                          : kind == 1 ? p.onDropped(now) : p.onIgnore(now);
                  if (!done) {
                    throw new AssertionError("first completion refused");
                  }
                  completed.incrementAndGet();
                  if (random.nextInt(8) == 0) {
                    if (p.onSuccess(now)) {
                      throw new AssertionError("second completion accepted");
                    }
                    doubleCompletions.incrementAndGet();
                  }
                }
              }
              for (Permit p : permits) {
                if (p.isActive()) {
                  holders.decrementAndGet();
                  if (p.onIgnore(0)) {
                    completed.incrementAndGet();
                  }
                }
              }
            } catch (Throwable e) {
              failure.set(e);
            }
          });
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(failure.get()).isNull();
    assertThat(completed.get())
        .as("every acquire completed exactly once")
        .isEqualTo(acquired.get());
    assertThat(gate.misuseCount()).isEqualTo(doubleCompletions.get());
    assertThat(gate.inflight()).as("no slot leaked or double-freed").isZero();
    return new Result(highWater, overLimit);
  }
}
