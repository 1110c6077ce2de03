package dev.parapet.bench.balance;

import dev.parapet.core.outlier.OutlierConfig;
import dev.parapet.core.outlier.OutlierDetector;
import dev.parapet.core.outlier.OutlierListener;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Recording an outcome in the outlier detector (100 hosts): a success, and a 503 that never
 * completes a run of 5 (successes interleave). Target: 0 B/op ({@code -prof gc}).
 *
 * <pre>
 * java -jar parapet-bench/target/benchmarks.jar 'dev.parapet.bench.balance.OutlierRecordBenchmark' -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class OutlierRecordBenchmark {
  private OutlierDetector detector;

  /** Each thread walks the hosts from its own offset, so the benchmark itself shares nothing. */
  @State(Scope.Thread)
  public static class Cursor {
    int host = (int) (Thread.currentThread().threadId() * 37 % 100);

    int next() {
      return host = host == 99 ? 0 : host + 1;
    }
  }

  @Setup(Level.Trial)
  public void setUp() {
    detector = new OutlierDetector(100, OutlierConfig.defaults(), OutlierListener.NONE, 0L);
  }

  @Benchmark
  public void recordSuccess(Cursor c) {
    detector.recordStatus(c.next(), 200, 1_000L);
  }

  @Benchmark
  public void recordFailureThenSuccess(Cursor c) {
    int h = c.next();
    detector.recordStatus(h, 503, 1_000L);
    detector.recordStatus(h, 200, 1_000L);
  }

  @Benchmark
  @Threads(2)
  public void recordSuccessTwoThreads(Cursor c) {
    detector.recordStatus(c.next(), 200, 1_000L);
  }
}
