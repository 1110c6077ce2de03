package dev.parapet.core.window;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The last {@code length} of evidence in {@code buckets} equal buckets (default 10 s in 100 buckets
 * of 100 ms: seed 000, "a 10-second rolling window with 100 buckets, rolling every 100ms").
 *
 * <p>How it works: time since the window's origin, divided by the bucket width, gives a bucket
 * sequence number; the bucket for the newest sequence (the head) is the only one written. Each
 * bucket is one {@code long} of {@link Packed} counters, so a record is one atomic add. When time
 * reaches a new sequence, one thread (the one that wins a try-lock) zeroes the buckets that fell
 * out of the window and caches the sum of the buckets behind the head in an immutable {@link Head};
 * a reading is then that cached sum plus the head bucket: O(1), exact for a single thread. Old
 * evidence ages out by time even when nothing is recorded, because readings advance the head too.
 * Bucket sequence numbers come from {@code now - origin}, so nanoTime wrap-around is harmless.
 *
 * <p>A record that arrives with a time older than the head counts in the head (it ages out at most
 * one bucket late); a record whose time is a full window behind is dropped.
 */
public final class TimeWindow implements OutcomeWindow {
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
    return h == Head.EMPTY_FAR_BEHIND ? 0 : h.calls + Packed.calls(r.headBucket(h));
  }

  @Override
  public long failures(long nowNanos) {
    Ring r = ring;
    Head h = r.headAt(nowNanos);
    return h == Head.EMPTY_FAR_BEHIND ? 0 : h.failures + Packed.failures(r.headBucket(h));
  }

  @Override
  public long slowCalls(long nowNanos) {
    Ring r = ring;
    Head h = r.headAt(nowNanos);
    return h == Head.EMPTY_FAR_BEHIND ? 0 : h.slowCalls + Packed.slowCalls(r.headBucket(h));
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
    final AtomicLongArray counts = new AtomicLongArray(buckets);
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

    long headBucket(Head h) {
      return counts.get(slotOf(h.seq));
    }

    void record(long delta, long nowNanos) {
      Head h = headAt(nowNanos);
      if (h == Head.EMPTY_FAR_BEHIND) {
        return;
      }
      int slot = slotOf(h.seq);
      if (Packed.calls(counts.get(slot)) < Packed.SATURATION) {
        counts.getAndAdd(slot, delta);
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
        int steps = (int) Math.min(gap, buckets);
        for (int i = 0; i < steps; i++) {
          counts.set(slotOf(seq - i), 0L);
        }
        long calls = 0;
        long failures = 0;
        long slow = 0;
        int headSlot = slotOf(seq);
        for (int i = 0; i < buckets; i++) {
          if (i != headSlot) {
            long b = counts.get(i);
            calls += Packed.calls(b);
            failures += Packed.failures(b);
            slow += Packed.slowCalls(b);
          }
        }
        Head next = new Head(seq, calls, failures, slow);
        head = next;
        return next;
      } finally {
        rotation.unlock();
      }
    }
  }
}
