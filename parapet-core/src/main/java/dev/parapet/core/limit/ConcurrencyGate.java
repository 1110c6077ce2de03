package dev.parapet.core.limit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The gate in front of origin-bound work: {@link #tryAcquire} hands out a slot if fewer than {@link
 * #limit()} requests are in flight, and the {@link Permit}'s completion gives it back and feeds the
 * {@link LimitAlgorithm}.
 *
 * <h2>Why it never exceeds the limit</h2>
 *
 * The limit and the in-flight count live in one 64-bit word ({@code limit << 32 | inflight}). An
 * acquire reads the word and compare-and-sets {@code inflight + 1} only if {@code inflight < limit}
 * in that very word; a limit change is a compare-and-set on the same word. So every successful
 * acquire is checked against the limit in force at the instant it takes effect, and two racing
 * acquires cannot both take the last slot: one CAS fails and re-reads. Netflix concurrency-limits'
 * {@code AbstractLimiter} instead checks {@code inflight < limit} and then increments separately,
 * which lets racing callers overshoot. (A limit that falls below the current in-flight count does
 * not evict anyone: new acquires fail until enough complete.)
 *
 * <h2>Feeding the algorithm</h2>
 *
 * The algorithm is not thread-safe. The completing thread that wins a try-lock feeds its sample; a
 * thread that finds the lock taken skips its sample (counted in {@link #skippedSamples()}) instead
 * of waiting, except that a skipped <em>drop</em> is remembered and fed by the next winner, so
 * congestion signals are never lost. Nothing here blocks, and acquire plus completion allocate
 * nothing.
 */
public final class ConcurrencyGate {

  /** Told after a slot frees up (completion or limit increase), on the thread that freed it. */
  @FunctionalInterface
  public interface SlotListener {
    void onSlotFreed(long nowNanos);
  }

  static final int SUCCESS = 0;
  static final int IGNORE = 1;
  static final int DROPPED = 2;

  private static final long INFLIGHT_MASK = 0xFFFF_FFFFL;
  private static final VarHandle STATE;
  private static final VarHandle SAMPLING;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      STATE = lookup.findVarHandle(ConcurrencyGate.class, "state", long.class);
      SAMPLING = lookup.findVarHandle(ConcurrencyGate.class, "sampling", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final LimitAlgorithm algorithm;
  private final @Nullable SlotListener slotListener;
  private final LongAdder rejected = new LongAdder();
  private final LongAdder skippedSamples = new LongAdder();
  private final LongAdder misuse = new LongAdder();
  private final AtomicInteger pendingDrops = new AtomicInteger();

  /** {@code limit << 32 | inflight}; accessed only through {@link #STATE}. */
  @SuppressWarnings("UnusedVariable")
  private volatile long state;

  /** 1 while a thread feeds the algorithm; accessed only through {@link #SAMPLING}. */
  @SuppressWarnings("UnusedVariable")
  private volatile int sampling;

  /** A gate driven by {@code algorithm}; the gate owns it from now on (no one else may call it). */
  public ConcurrencyGate(LimitAlgorithm algorithm) {
    this(algorithm, null);
  }

  /** A gate that also tells {@code slotListener} whenever a slot frees up (admission queues). */
  public ConcurrencyGate(LimitAlgorithm algorithm, @Nullable SlotListener slotListener) {
    this.algorithm = algorithm;
    this.slotListener = slotListener;
    this.state = pack(Math.max(1, algorithm.limit()), 0);
  }

  /**
   * Takes a slot into {@code permit} if one is free. Returns {@code false} (and counts a rejection)
   * when {@link #inflight()} has reached {@link #limit()}. Allocation-free.
   *
   * @throws IllegalStateException if {@code permit} is still active (complete it first)
   */
  public boolean tryAcquire(Permit permit, long nowNanos) {
    permit.checkIdle();
    long s;
    int inflight;
    do {
      s = (long) STATE.getVolatile(this);
      inflight = (int) (s & INFLIGHT_MASK);
      if (inflight >= (int) (s >>> 32)) {
        rejected.increment();
        return false;
      }
    } while (!STATE.compareAndSet(this, s, s + 1));
    permit.arm(this, nowNanos, inflight + 1);
    return true;
  }

  /**
   * Takes a slot into {@code permit} even when {@link #inflight()} has reached the limit: a
   * guaranteed share that admission control owes a partition (see {@code AdmissionController}). The
   * completion is fed to the algorithm like any other; until enough slots free up, {@link
   * #tryAcquire} refuses everyone else. Allocation-free.
   */
  public void acquireBeyondLimit(Permit permit, long nowNanos) {
    permit.checkIdle();
    long s = (long) STATE.getAndAdd(this, 1L);
    permit.arm(this, nowNanos, (int) (s & INFLIGHT_MASK) + 1);
  }

  /** The current limit. */
  public int limit() {
    return (int) ((long) STATE.getVolatile(this) >>> 32);
  }

  /** Requests holding a slot now. */
  public int inflight() {
    return (int) ((long) STATE.getVolatile(this) & INFLIGHT_MASK);
  }

  /** Acquires refused because the limit was reached. */
  public long rejectedCount() {
    return rejected.sum();
  }

  /** Completions of a permit that was already completed: ignored, and counted here. */
  public long misuseCount() {
    return misuse.sum();
  }

  /** Samples not fed to the algorithm because another thread was feeding it at that moment. */
  public long skippedSamples() {
    return skippedSamples.sum();
  }

  void countMisuse() {
    misuse.increment();
  }

  /** Gives the slot back, then feeds the sample; called once per acquire by {@link Permit}. */
  void release(long startNanos, int inflightAtStart, int kind, long nowNanos) {
    STATE.getAndAdd(this, -1L);
    if (kind != IGNORE) {
      sample(startNanos, nowNanos - startNanos, inflightAtStart, kind == DROPPED);
    }
    SlotListener listener = slotListener;
    if (listener != null) {
      listener.onSlotFreed(nowNanos);
    }
  }

  /** Feeds one sample if nobody else is. */
  private void sample(long startNanos, long rttNanos, int inflight, boolean dropped) {
    if (!SAMPLING.compareAndSet(this, 0, 1)) {
      if (dropped) {
        pendingDrops.incrementAndGet();
      } else {
        skippedSamples.increment();
      }
      return;
    }
    int newLimit;
    try {
      if (pendingDrops.get() > 0 && pendingDrops.getAndSet(0) > 0 && !dropped) {
        algorithm.onSample(startNanos, rttNanos, inflight, true);
      }
      newLimit = algorithm.onSample(startNanos, rttNanos, inflight, dropped);
    } finally {
      SAMPLING.setRelease(this, 0);
    }
    setLimit(newLimit);
  }

  /** Swaps the limit half of the word, leaving the in-flight half alone. */
  private void setLimit(int newLimit) {
    int limit = Math.max(1, newLimit);
    long s;
    int old;
    do {
      s = (long) STATE.getVolatile(this);
      old = (int) (s >>> 32);
      if (old == limit) {
        return;
      }
    } while (!STATE.compareAndSet(this, s, pack(limit, (int) (s & INFLIGHT_MASK))));
  }

  private static long pack(int limit, int inflight) {
    return ((long) limit << 32) | (inflight & INFLIGHT_MASK);
  }

  @Override
  public String toString() {
    return "ConcurrencyGate[limit=" + limit() + ", inflight=" + inflight() + ", " + algorithm + "]";
  }
}
