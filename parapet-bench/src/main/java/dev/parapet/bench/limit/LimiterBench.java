package dev.parapet.bench.limit;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.parapet.core.limit.ConcurrencyGate;
import dev.parapet.core.limit.Gradient2Limit;
import dev.parapet.core.limit.LimitAlgorithm;
import dev.parapet.core.limit.Permit;
import dev.parapet.core.limit.VegasLimit;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One acquire plus one successful completion (which feeds the limit algorithm), Parapet's {@link
 * ConcurrencyGate} against Netflix concurrency-limits' {@link SimpleLimiter}, with the same
 * algorithm and bounds (initial 200, min 20, max 2000) and the same clock ({@link
 * System#nanoTime()} read at acquire and at completion: concurrency-limits reads it internally,
 * Parapet's caller passes it in). Both at one and two threads sharing one limiter. {@code
 * parapetTimePassedIn*} measures the gate alone with a timestamp the caller already holds, and
 * {@code clockReadTwice} the clock share of the others.
 *
 * <pre>
 * java -jar parapet-bench/target/benchmarks.jar 'dev.parapet.bench.limit.LimiterBench' -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class LimiterBench {

  @Param({"vegas", "gradient2"})
  public String algorithm;

  private final Ticker ticker = Ticker.system();
  private ConcurrencyGate gate;
  private SimpleLimiter<Void> netflix;

  /** Each thread owns its permit, as each request context would. */
  @State(Scope.Thread)
  public static class Slot {
    final Permit permit = new Permit();
    long now;
  }

  @Setup
  public void setUp() {
    LimitAlgorithm ours;
    Limit theirs;
    switch (algorithm) {
      case "vegas" -> {
        ours = VegasLimit.of(200, 20, 2000, RandomSource.threadLocal());
        theirs =
            com.netflix.concurrency.limits.limit.VegasLimit.newBuilder()
                .initialLimit(200)
                .maxConcurrency(2000)
                .build();
      }
      case "gradient2" -> {
        ours = Gradient2Limit.of(200, 20, 2000);
        theirs =
            com.netflix.concurrency.limits.limit.Gradient2Limit.newBuilder()
                .initialLimit(200)
                .minLimit(20)
                .maxConcurrency(2000)
                .build();
      }
      default -> throw new IllegalArgumentException("algorithm : " + algorithm);
    }
    gate = new ConcurrencyGate(ours);
    netflix = SimpleLimiter.newBuilder().limit(theirs).build();
  }

  private boolean parapet(Slot slot) {
    Permit permit = slot.permit;
    if (!gate.tryAcquire(permit, ticker.read())) {
      return false;
    }
    return permit.onSuccess(ticker.read());
  }

  /** The gate alone: the caller already holds a timestamp (the proxy reads one per request). */
  private boolean parapetTimePassedIn(Slot slot) {
    Permit permit = slot.permit;
    long start = slot.now += 1_000;
    if (!gate.tryAcquire(permit, start)) {
      return false;
    }
    return permit.onSuccess(start + 500);
  }

  private boolean concurrencyLimits() {
    Optional<Limiter.Listener> listener = netflix.acquire(null);
    if (listener.isEmpty()) {
      return false;
    }
    listener.get().onSuccess();
    return true;
  }

  @Benchmark
  @Threads(1)
  public boolean parapet1Thread(Slot slot) {
    return parapet(slot);
  }

  @Benchmark
  @Threads(2)
  public boolean parapet2Threads(Slot slot) {
    return parapet(slot);
  }

  @Benchmark
  @Threads(1)
  public boolean concurrencyLimits1Thread() {
    return concurrencyLimits();
  }

  @Benchmark
  @Threads(2)
  public boolean concurrencyLimits2Threads() {
    return concurrencyLimits();
  }

  @Benchmark
  @Threads(1)
  public boolean parapetTimePassedIn1Thread(Slot slot) {
    return parapetTimePassedIn(slot);
  }

  @Benchmark
  @Threads(2)
  public boolean parapetTimePassedIn2Threads(Slot slot) {
    return parapetTimePassedIn(slot);
  }

  /** What the two clock reads in the other benchmarks cost by themselves. */
  @Benchmark
  @Threads(1)
  public long clockReadTwice() {
    return ticker.read() + ticker.read();
  }
}
