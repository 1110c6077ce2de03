package dev.parapet.core.overload;

import dev.parapet.core.time.Ticker;
import java.lang.management.ManagementFactory;
import java.util.function.LongSupplier;

/**
 * This process's CPU load over all cores since the previous {@link #sample()}, in {@code [0, 1]}:
 * CPU time used ({@code com.sun.management.OperatingSystemMXBean#getProcessCpuTime()}, part of the
 * JDK's {@code jdk.management} module) over the wall time passed times the processors this JVM may
 * use ({@link Runtime#availableProcessors()}, which follows a container's CPU limit). The 75 %
 * threshold of seed 001 ("origin fetches get deprioritized when CPU exceeds 75%") applies to it.
 *
 * <p>Why not {@code getProcessCpuLoad()}, which reports the same figure: on Linux it reads and
 * parses {@code /proc} files on every call, 0.3-1 ms of CPU each on the two-core benchmark machine
 * against about a microsecond for the CPU time (measured with a loop of calls to each, 2026-12-01),
 * every 500 ms beside event loops that are short of a core already.
 *
 * <p>Reads the JVM; not pure. One caller: call {@link #sample()} from one sampling thread, not from
 * an event loop.
 */
public final class ProcessCpuSampler {
  private final LongSupplier cpuTimeNanos;
  private final Ticker ticker;
  private final int processors;
  private long lastCpu;
  private long lastWall;

  /** Reads this JVM. */
  public ProcessCpuSampler() {
    this(jvmCpuTime(), Ticker.system(), Runtime.getRuntime().availableProcessors());
  }

  /**
   * @param cpuTimeNanos the process's CPU time so far, negative when the platform has none
   * @param ticker wall time
   * @param processors the processors the load is a share of (at least 1)
   */
  public ProcessCpuSampler(LongSupplier cpuTimeNanos, Ticker ticker, int processors) {
    if (processors < 1) {
      throw new IllegalArgumentException("processors : " + processors + " (expected: >= 1)");
    }
    this.cpuTimeNanos = cpuTimeNanos;
    this.ticker = ticker;
    this.processors = processors;
    this.lastCpu = cpuTimeNanos.getAsLong();
    this.lastWall = ticker.read();
  }

  /**
   * Process CPU load since the previous call (or since construction) in {@code [0, 1]}, or NaN when
   * the platform does not report CPU time or no time has passed.
   */
  public double sample() {
    long cpu = cpuTimeNanos.getAsLong();
    long wall = ticker.read();
    long cpuUsed = cpu - lastCpu;
    long wallPassed = wall - lastWall;
    boolean known = cpu >= 0 && lastCpu >= 0;
    lastCpu = cpu;
    lastWall = wall;
    if (!known || wallPassed <= 0) {
      return Double.NaN;
    }
    double load = (double) cpuUsed / ((double) wallPassed * processors);
    return Math.max(0.0, Math.min(1.0, load));
  }

  private static LongSupplier jvmCpuTime() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean sun) {
      return sun::getProcessCpuTime;
    }
    return () -> -1;
  }
}
