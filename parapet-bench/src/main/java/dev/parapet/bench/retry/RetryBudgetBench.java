package dev.parapet.bench.retry;

import dev.parapet.core.retry.BudgetSlot;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.retry.RetryAfter;
import dev.parapet.core.retry.RetryBudget;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.time.RandomSource;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Retry budget check: acquire + release of a slot (the gate), and the full retry decision (rules,
 * full-jitter backoff, budget). Target: <= 50 ns, 0 B/op (run with {@code -prof gc}). The 2-thread
 * variants contend on the budget's single AtomicLong.
 *
 * <p>{@code java -jar parapet-bench/target/benchmarks.jar 'RetryBudgetBench' -prof gc}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class RetryBudgetBench {
  private static final long NO_DEADLINE = Long.MAX_VALUE;

  private RetryBudget budget;
  private RetryPolicy policy;

  /** Per-thread slot, reused: a request context owns one. */
  @State(Scope.Thread)
  public static class Caller {
    BudgetSlot slot;

    @Setup
    public void setUp() {
      slot = new BudgetSlot();
    }
  }

  @Setup
  public void setUp() {
    budget = RetryBudget.withDefaults();
    for (int i = 0; i < 1_000; i++) {
      budget.requestStarted(); // limit 200: every acquire succeeds, the realistic common case
    }
    ExtraLoadBudget extra = new ExtraLoadBudget(budget, ExtraLoadBudget.Sharing.SHARED);
    policy = RetryPolicy.withDefaults(RandomSource.threadLocal(), extra);
  }

  @Benchmark
  @Threads(1)
  public boolean acquireRelease(Caller caller) {
    boolean granted = budget.tryAcquire(caller.slot);
    if (granted) {
      caller.slot.release();
    }
    return granted;
  }

  @Benchmark
  @Threads(2)
  public boolean acquireRelease2Threads(Caller caller) {
    return acquireRelease(caller);
  }

  @Benchmark
  @Threads(1)
  public long decideAndRelease(Caller caller) {
    long decision = policy.decide(1, false, RetryAfter.ABSENT, NO_DEADLINE, caller.slot);
    if (decision >= 0) {
      caller.slot.release();
    }
    return decision;
  }

  @Benchmark
  @Threads(2)
  public long decideAndRelease2Threads(Caller caller) {
    return decideAndRelease(caller);
  }
}
