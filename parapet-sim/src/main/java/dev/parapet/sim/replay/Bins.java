package dev.parapet.sim.replay;

import java.util.Arrays;

/**
 * Counts per time bin for a whole day in bounded memory: bins start one second wide; when a count
 * lands past {@link #MAX_BINS}, neighbouring bins are merged in pairs and the width doubles. Widths
 * are powers of two seconds, so series of one replay are brought to a common width exactly ({@link
 * #values}), and a chart of any length has at most MAX_BINS points.
 */
public final class Bins {
  /** The most bins kept (a day: 64-second bins, 1,350 of them). */
  public static final int MAX_BINS = 2000;

  private long binNanos = Scan.NANOS_PER_SECOND;
  private int[] counts = new int[64];
  private int length;

  void add(long nanos, int delta) {
    long i = nanos / binNanos;
    while (i >= MAX_BINS) {
      coarsen();
      i = nanos / binNanos;
    }
    int bin = (int) i;
    if (bin >= counts.length) {
      counts = Arrays.copyOf(counts, Math.min(MAX_BINS, Math.max(bin + 1, counts.length * 2)));
    }
    counts[bin] += delta;
    if (bin >= length) {
      length = bin + 1;
    }
  }

  private void coarsen() {
    int n = (length + 1) / 2;
    for (int i = 0; i < n; i++) {
      int a = counts[2 * i];
      int b = 2 * i + 1 < length ? counts[2 * i + 1] : 0;
      counts[i] = a + b;
    }
    Arrays.fill(counts, n, counts.length, 0);
    length = n;
    binNanos *= 2;
  }

  long binNanos() {
    return binNanos;
  }

  /**
   * The counts in bins {@code width} wide (a power-of-two multiple of this one's), {@code n} of
   * them.
   */
  long[] values(long width, int n) {
    long[] out = new long[n];
    long factor = width / binNanos;
    for (int i = 0; i < length; i++) {
      int j = (int) (i / factor);
      if (j < n) {
        out[j] += counts[i];
      }
    }
    return out;
  }

  /** Ints retained: bounded by MAX_BINS. */
  int capacity() {
    return counts.length;
  }
}
