package dev.parapet.bench.hedge;

import dev.parapet.core.latency.RollingLatencyHistogram;
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
 * Recording one latency into the rolling histogram (the per-attempt cost hedging and relative
 * slow-call thresholds add). Latencies cycle through 1024 log-spread values; virtual time advances
 * 1 us per op, so a 2 s sub-window rotates (and is cleared) every 2 000 000 ops, amortised into the
 * figure. Target: <= 50 ns, 0 B/op.
 *
 * <p>{@code java -jar parapet-bench/target/benchmarks.jar 'LatencyRecordBench' -prof gc}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class LatencyRecordBench {
  private static final int MASK = 1023;
  private final long[] latencies = new long[MASK + 1];
  private RollingLatencyHistogram histogram;

  /** Per-thread cursor and virtual clock. */
  @State(Scope.Thread)
  public static class Caller {
    int i;
    long now;
  }

  @Setup
  public void setUp() {
    histogram = RollingLatencyHistogram.withDefaults(0);
    for (int i = 0; i < latencies.length; i++) {
      latencies[i] = (long) Math.pow(2, 16 + (i * 17 % 1024) / 64.0); // 65 us .. 4 s
    }
  }

  @Benchmark
  @Threads(1)
  public void record(Caller caller) {
    histogram.record(latencies[caller.i++ & MASK], caller.now += 1_000);
  }

  @Benchmark
  @Threads(2)
  public void record2Threads(Caller caller) {
    record(caller);
  }
}
