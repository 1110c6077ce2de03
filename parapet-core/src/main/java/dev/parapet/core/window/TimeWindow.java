package dev.parapet.core.window;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongUnaryOperator;

/**
 * The last {@code length} of evidence in {@code buckets} equal buckets (default 10 s in 100 buckets
 * of 100 ms: seed 000, "a 10-second rolling window with 100 buckets, rolling every 100ms").
 *
 * <p>How it works: time since the window's origin, divided by the bucket width, gives a bucket
 * sequence number; only the newest bucket (the head) is written. The head lives in a few striped
 * cells, each on its own cache line, and a thread adds to its own cell: one atomic add of {@link
 * Packed} counters, and threads on different cells never contend (an edge proxy's event loops all
 * record into the same hot origin's breaker; LongAdder's idea, sized to the CPUs). When time
 * reaches a new sequence, one thread (the one that wins a try-lock) drains the cells into the old
 * head's bucket, zeroes the buckets that fell out of the window, keeping a running sum of the
 * buckets (so a rotation costs the buckets it crosses, not the whole ring), and caches that sum
 * behind the new head in an immutable {@link Head}; a reading is that cached sum plus the cells:
 * O(cells), exact for a single thread. Old evidence ages out by time even when nothing is recorded,
 * because readings advance the head too. Sequence numbers come from {@code now - origin}, so
 * nanoTime wrap-around is harmless.
 *
 * <p>A record that arrives with a time older than the head counts in the head (it ages out at most
 * one bucket late); a record whose time is a full window behind is dropped. A record racing with a
 * rotation may land in the new head instead of the old one: again at most one bucket late.
 */
public final class TimeWindow implements OutcomeWindow {
  /** Longs per cell: 8 x 8 bytes = one 64-byte cache line, so cells never share a line. */
  private static final int STRIDE = 8;

  /** Striped head cells: four per CPU rounded up to a power of two, at least 4, at most 64. */
  private static final int CELLS =
      Math.min(
          64,
          Integer.highestOneBit(
              Math.max(4, 4 * Runtime.getRuntime().availableProcessors()) * 2 - 1));

  /**
   * Each thread's cell index, handed out in the order threads first record: the first CELLS threads
   * (a proxy's event loops) get a cell each and never share one, which a hash of the thread id
   * cannot promise.
   */
  private static final AtomicInteger NEXT_CELL = new AtomicInteger();

  private static final ThreadLocal<int[]> CELL =
      ThreadLocal.withInitial(() -> new int[] {NEXT_CELL.getAndIncrement()});

  private final long bucketNanos;
  private final int buckets;
  private volatile Ring ring;

  /**
   * A window of {@code length} split into {@code buckets} buckets, starting at {@code nowNanos}.
   */
  public TimeWindow(Duration length, int buckets, long nowNanos) {
    long lengthNanos = Durations.positiveNanos("window", length);
    if (buckets < 1 || buckets > 10_000) {
      throw new IllegalArgumentException("buckets : " + buckets + " (expected: in [1, 10000])");
    }
    if (lengthNanos / buckets < 1_000_000L) {
      throw new IllegalArgumentException(
          "window / buckets : " + (lengthNanos / buckets) + "ns (expected: >= 1ms per bucket)");
    }
    this.bucketNanos = lengthNanos / buckets;
    this.buckets = buckets;
    this.ring = new Ring(nowNanos);
  }

  /** The default window: 10 s in 100 buckets. */
  public static TimeWindow ofDefaults(long nowNanos) {
    return new TimeWindow(Duration.ofSeconds(10), 100, nowNanos);
  }

  @Override
  public void record(Outcome.Kind kind, long nowNanos) {
    long delta = Packed.delta(kind);
    if (delta != 0) {
      ring.record(delta, nowNanos);
    }
  }

  @Override
  public long calls(long nowNanos) {
    Ring r = ring;
    Head h = r.headAt(nowNanos);
    return h == Head.EMPTY_FAR_BEHIND ? 0 : h.calls + r.sumCells(Packed::calls);
  }

  @Override
  public long failures(long nowNanos) {
    Ring r = ring;
    Head h = r.headAt(nowNanos);
    return h == Head.EMPTY_FAR_BEHIND ? 0 : h.failures + r.sumCells(Packed::failures);
  }

  @Override
  public long slowCalls(long nowNanos) {
    Ring r = ring;
    Head h = r.headAt(nowNanos);
    return h == Head.EMPTY_FAR_BEHIND ? 0 : h.slowCalls + r.sumCells(Packed::slowCalls);
  }

  @Override
  public void reset(long nowNanos) {
    // A fresh ring: records racing with the reset land in the old one and are forgotten with it.
    ring = new Ring(nowNanos);
  }

  /** Width of one bucket in nanoseconds. */
  public long bucketNanos() {
    return bucketNanos;
  }

  /** Immutable: the head sequence and the sum of the buckets behind it. */
  private static final class Head {
    /** Marker for "the caller's time is a whole window behind the head": nothing to read. */
    static final Head EMPTY_FAR_BEHIND = new Head(0, 0, 0, 0);

    final long seq;
    final long calls;
    final long failures;
    final long slowCalls;

    Head(long seq, long calls, long failures, long slowCalls) {
      this.seq = seq;
      this.calls = calls;
      this.failures = failures;
      this.slowCalls = slowCalls;
    }
  }

  private final class Ring {
    final long originNanos;

    /** The buckets, and their running sums: read and written under {@link #rotation} only. */
    final long[] counts = new long[buckets];

    long sumCalls;
    long sumFailures;
    long sumSlow;

    final AtomicLongArray cells = new AtomicLongArray(CELLS * STRIDE + STRIDE);
    final ReentrantLock rotation = new ReentrantLock();
    volatile Head head = new Head(0, 0, 0, 0);

    Ring(long originNanos) {
      this.originNanos = originNanos;
    }

    long seqOf(long nowNanos) {
      return Math.floorDiv(nowNanos - originNanos, bucketNanos);
    }

    int slotOf(long seq) {
      return (int) Math.floorMod(seq, (long) buckets);
    }

    /** This thread's cell (see {@link #CELL}). */
    private int cellIndex() {
      // + 1 skips the first line, which the array header shares with other objects.
      return ((CELL.get()[0] & (CELLS - 1)) + 1) * STRIDE;
    }

    long sumCells(LongUnaryOperator field) {
      long sum = 0;
      for (int c = 1; c <= CELLS; c++) {
        sum += field.applyAsLong(cells.get(c * STRIDE));
      }
      return sum;
    }

    void record(long delta, long nowNanos) {
      Head h = headAt(nowNanos);
      if (h == Head.EMPTY_FAR_BEHIND) {
        return;
      }
      int cell = cellIndex();
      if (Packed.calls(cells.get(cell)) < Packed.SATURATION) {
        cells.getAndAdd(cell, delta);
      }
    }

    /** The head for {@code nowNanos}, rotating if time has moved to a newer bucket. */
    Head headAt(long nowNanos) {
      Head h = head;
      long seq = seqOf(nowNanos);
      long ahead = seq - h.seq;
      if (ahead <= 0) {
        return -ahead >= buckets ? Head.EMPTY_FAR_BEHIND : h;
      }
      return rotate(seq);
    }

    private Head rotate(long seq) {
      if (!rotation.tryLock()) {
        // Another thread is rotating right now; count in the head it is replacing (bounded error).
        return head;
      }
      try {
        Head h = head;
        long gap = seq - h.seq;
        if (gap <= 0) {
          return h;
        }
        // Drain the cells into the old head's bucket, field by field so sums never carry over. A
        // cell that reads zero is left alone: no atomic exchange for the cells nobody wrote.
        long calls = 0;
        long failures = 0;
        long slow = 0;
        for (int c = 1; c <= CELLS; c++) {
          if (cells.get(c * STRIDE) != 0L) {
            long v = cells.getAndSet(c * STRIDE, 0L);
            calls += Packed.calls(v);
            failures += Packed.failures(v);
            slow += Packed.slowCalls(v);
          }
        }
        long bucket = Packed.of(calls, failures, slow);
        int slot = slotOf(h.seq);
        counts[slot] = bucket;
        sumCalls += Packed.calls(bucket);
        sumFailures += Packed.failures(bucket);
        sumSlow += Packed.slowCalls(bucket);
        if (gap >= buckets) {
          Arrays.fill(counts, 0L);
          sumCalls = 0;
          sumFailures = 0;
          sumSlow = 0;
        } else {
          for (long k = 0; k < gap; k++) {
            slot = slot + 1 == buckets ? 0 : slot + 1;
            long b = counts[slot];
            if (b != 0L) {
              sumCalls -= Packed.calls(b);
              sumFailures -= Packed.failures(b);
              sumSlow -= Packed.slowCalls(b);
              counts[slot] = 0L;
            }
          }
        }
        Head next = new Head(seq, sumCalls, sumFailures, sumSlow);
        head = next;
        return next;
      } finally {
        rotation.unlock();
      }
    }
  }
}
