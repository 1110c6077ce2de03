package dev.parapet.bench.breaker;

import dev.failsafe.CircuitBreaker;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Permit;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.RandomSource;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
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
 * The CLOSED path — admit a call, record its success — of Parapet's breaker beside Resilience4j's
 * (time-based window) and Failsafe's (time-based failure rate), each configured like DESIGN.md's
 * defaults: 10 s window, 200-call minimum, 50 % failure rate, 30 s open.
 *
 * <ul>
 *   <li>{@code parapet}: the breaker's own cost; time comes from a per-thread counter advancing 1
 *       µs per call, so the 100 ms buckets rotate as under 1 M calls/s.
 *   <li>{@code parapetNanoTime}: the same plus one {@code System.nanoTime()} per call, the reading
 *       a proxy takes anyway to time the attempt (the other two read their clocks inside).
 *   <li>{@code resilience4j}: {@code tryAcquirePermission()} + {@code onSuccess(duration)}.
 *   <li>{@code failsafe}: {@code tryAcquirePermit()} + {@code recordSuccess()}.
 * </ul>
 *
 * Methods ending in {@code T2} run the same on two threads sharing one breaker.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class BreakerBenchmark {

  /** One breaker of each kind, shared by the benchmark's threads. */
  @State(Scope.Benchmark)
  public static class Breakers {
    dev.parapet.core.breaker.CircuitBreaker parapet;
    io.github.resilience4j.circuitbreaker.CircuitBreaker resilience4j;
    CircuitBreaker<Object> failsafe;

    @Setup
    public void setUp() {
      parapet =
          new dev.parapet.core.breaker.CircuitBreaker(
              BreakerKey.of(dev.parapet.core.breaker.Scope.ORIGIN, "bench"),
              BreakerPolicy.defaults(),
              RandomSource.threadLocal(),
              BreakerListener.NONE,
              System.nanoTime());
      resilience4j =
          io.github.resilience4j.circuitbreaker.CircuitBreaker.of(
              "bench",
              CircuitBreakerConfig.custom()
                  .slidingWindowType(SlidingWindowType.TIME_BASED)
                  .slidingWindowSize(10)
                  .minimumNumberOfCalls(200)
                  .failureRateThreshold(50)
                  .slowCallRateThreshold(35)
                  .slowCallDurationThreshold(Duration.ofMillis(500))
                  .waitDurationInOpenState(Duration.ofSeconds(30))
                  .build());
      failsafe =
          CircuitBreaker.builder()
              .withFailureRateThreshold(50, 200, Duration.ofSeconds(10))
              .withDelay(Duration.ofSeconds(30))
              .build();
    }
  }

  /** Per-thread: the reusable permit and the fake clock. */
  @State(Scope.Thread)
  public static class Caller {
    final Permit permit = new Permit();
    long now;

    @Setup
    public void setUp() {
      now = System.nanoTime();
    }
  }

  private static final long DURATION_NANOS = 1_000_000L;

  @Benchmark
  @Threads(1)
  public boolean parapet(Breakers b, Caller c) {
    return closedPath(b, c);
  }

  @Benchmark
  @Threads(2)
  public boolean parapetT2(Breakers b, Caller c) {
    return closedPath(b, c);
  }

  @Benchmark
  @Threads(1)
  public boolean parapetNanoTime(Breakers b, Caller c) {
    return closedPathNanoTime(b, c);
  }

  @Benchmark
  @Threads(2)
  public boolean parapetNanoTimeT2(Breakers b, Caller c) {
    return closedPathNanoTime(b, c);
  }

  @Benchmark
  @Threads(1)
  public boolean resilience4j(Breakers b) {
    return r4j(b);
  }

  @Benchmark
  @Threads(2)
  public boolean resilience4jT2(Breakers b) {
    return r4j(b);
  }

  @Benchmark
  @Threads(1)
  public boolean failsafe(Breakers b) {
    return fs(b);
  }

  @Benchmark
  @Threads(2)
  public boolean failsafeT2(Breakers b) {
    return fs(b);
  }

  private static boolean closedPath(Breakers b, Caller c) {
    long now = c.now += 1_000;
    boolean ok = b.parapet.tryAcquire(c.permit, now).isPermitted();
    if (ok) {
      c.permit.onOutcome(Outcome.SUCCESS, now);
    }
    return ok;
  }

  private static boolean closedPathNanoTime(Breakers b, Caller c) {
    long now = System.nanoTime();
    boolean ok = b.parapet.tryAcquire(c.permit, now).isPermitted();
    if (ok) {
      c.permit.onOutcome(Outcome.SUCCESS, now);
    }
    return ok;
  }

  private static boolean r4j(Breakers b) {
    boolean ok = b.resilience4j.tryAcquirePermission();
    if (ok) {
      b.resilience4j.onSuccess(DURATION_NANOS, TimeUnit.NANOSECONDS);
    }
    return ok;
  }

  private static boolean fs(Breakers b) {
    boolean ok = b.failsafe.tryAcquirePermit();
    if (ok) {
      b.failsafe.recordSuccess();
    }
    return ok;
  }
}
