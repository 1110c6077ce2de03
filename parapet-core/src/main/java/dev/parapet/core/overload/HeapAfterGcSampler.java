package dev.parapet.core.overload;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.List;

/**
 * Reads the heap in use after the most recent garbage collection as a fraction of the maximum heap:
 * the live set, which, unlike the instantaneous heap use, does not swing with allocation between
 * collections. Sums {@link MemoryPoolMXBean#getCollectionUsage()} over the heap pools (the usage
 * each pool had right after its last collection, as the JVM records it) and divides by {@link
 * Runtime#maxMemory()}. Envoy's {@code fixed_heap} monitor measures the same kind of ratio.
 *
 * <p>Reads the JVM; not pure. Call {@link #sample()} from a sampling thread and feed the result to
 * {@link OverloadPolicy#onReading}. Allocates a little per sample (the MXBeans do).
 */
public final class HeapAfterGcSampler {
  private final List<MemoryPoolMXBean> heapPools;
  private final long maxHeapBytes;

  public HeapAfterGcSampler() {
    this.heapPools =
        ManagementFactory.getMemoryPoolMXBeans().stream()
            .filter(p -> p.getType() == MemoryType.HEAP && p.isCollectionUsageThresholdSupported())
            .toList();
    this.maxHeapBytes = Runtime.getRuntime().maxMemory();
  }

  /** Heap after GC / max heap in {@code [0, 1]}, or NaN when the JVM does not report it. */
  public double sample() {
    if (heapPools.isEmpty() || maxHeapBytes <= 0 || maxHeapBytes == Long.MAX_VALUE) {
      return Double.NaN;
    }
    long used = 0;
    for (MemoryPoolMXBean pool : heapPools) {
      MemoryUsage usage = pool.getCollectionUsage();
      if (usage != null) {
        used += usage.getUsed();
      }
    }
    return Math.min(1.0, (double) used / maxHeapBytes);
  }
}
