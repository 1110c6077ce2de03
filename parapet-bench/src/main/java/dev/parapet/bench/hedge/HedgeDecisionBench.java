package dev.parapet.bench.hedge;

import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.retry.BudgetSlot;
import dev.parapet.core.retry.ExtraLoadBudget;
import java.time.Duration;
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
 * Hedge decision per request: count the request, read the (cached) p95 delay, and decide at timer
 * time (breaker, one-hedge rule, 15 % rate token, shared extra-load place), releasing a granted
 * place. Virtual time advances 1 us per op, so the p95 is recomputed every 100 000 ops (amortised
 * into the figure). Target: <= 50 ns, 0 B/op.
 *
 * <p>{@code java -jar parapet-bench/target/benchmarks.jar 'HedgeDecisionBench' -prof gc}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class HedgeDecisionBench {
  private HedgePolicy policy;

  /** Per-thread request context and virtual clock. */
  @State(Scope.Thread)
  public static class Caller {
    BudgetSlot slot;
    long now;

    @Setup
    public void setUp() {
      slot = new BudgetSlot();
      now = 0;
    }
  }

  @Setup
  public void setUp() {
    RollingLatencyHistogram latencies =
        new RollingLatencyHistogram(
            Duration.ofDays(365), 5, 0); // samples stay live for the whole run
    for (int i = 1; i <= 1_000; i++) {
      latencies.record(i * 100_000L, 0);
    }
    ExtraLoadBudget extra = ExtraLoadBudget.sharedDefaults();
    for (int i = 0; i < 1_000; i++) {
      extra.requestStarted();
    }
    policy = HedgePolicy.withDefaults(latencies, extra);
  }

  @Benchmark
  @Threads(1)
  public long decide(Caller caller) {
    long now = caller.now += 1_000;
    policy.onRequest();
    long delay = policy.delayNanos(now);
    HedgeDecision decision = policy.tryHedge(true, 0, caller.slot);
    if (decision == HedgeDecision.HEDGE) {
      caller.slot.release();
    }
    return delay + decision.ordinal();
  }

  @Benchmark
  @Threads(2)
  public long decide2Threads(Caller caller) {
    return decide(caller);
  }
}
