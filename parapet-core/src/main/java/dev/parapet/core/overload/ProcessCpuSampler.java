package dev.parapet.core.overload;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/**
 * Reads this process's recent CPU load over all cores, {@code
 * com.sun.management.OperatingSystemMXBean#getProcessCpuLoad()} (part of the JDK's {@code
 * jdk.management} module), in {@code [0, 1]}. The 75 % threshold of seed 001 ("origin fetches get
 * deprioritized when CPU exceeds 75%") applies to it.
 *
 * <p>Reads the JVM; not pure. Call {@link #sample()} from a sampling thread, not from an event
 * loop.
 */
public final class ProcessCpuSampler {
  private final OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();

  /** Process CPU load in {@code [0, 1]}, or NaN when the platform does not report it. */
  public double sample() {
    if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
      double load = sun.getProcessCpuLoad();
      return load < 0.0 ? Double.NaN : Math.min(1.0, load);
    }
    return Double.NaN;
  }
}
