package dev.parapet.core.window;

import dev.parapet.core.outcome.Outcome;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The last {@code size} calls (seed 002: "a breaker evaluates the last 20 eligible calls").
 *
 * <p>How it works: a ring of {@code size} slots holds each call's {@link Packed} delta; a cursor
 * picks the slot, an atomic swap replaces the oldest call, and one atomic add moves the running
 * totals by (new - old). Because each slot is swapped atomically, concurrent records never make the
 * totals drift from the ring. Evidence ages out by count, not by time: an origin that receives no
 * calls keeps its last {@code size} outcomes (the breaker resets the window on state changes).
 */
public final class CountWindow implements OutcomeWindow {
  private final int size;
  private volatile Ring ring;

  /** A window over the last {@code size} calls. */
  public CountWindow(int size) {
    if (size < 1 || size > 1_000_000) {
      throw new IllegalArgumentException("size : " + size + " (expected: in [1, 1000000])");
    }
    this.size = size;
    this.ring = new Ring(size);
  }

  @Override
  public void record(Outcome.Kind kind, long nowNanos) {
    long delta = Packed.delta(kind);
    if (delta != 0) {
      ring.record(delta);
    }
  }

  @Override
  public long calls(long nowNanos) {
    return Packed.calls(ring.totals.get());
  }

  @Override
  public long failures(long nowNanos) {
    return Packed.failures(ring.totals.get());
  }

  @Override
  public long slowCalls(long nowNanos) {
    return Packed.slowCalls(ring.totals.get());
  }

  @Override
  public void reset(long nowNanos) {
    ring = new Ring(size);
  }

  /** How many calls the window holds at most. */
  public int size() {
    return size;
  }

  private static final class Ring {
    final AtomicLongArray slots;
    final AtomicLong cursor = new AtomicLong();
    final AtomicLong totals = new AtomicLong();

    Ring(int size) {
      this.slots = new AtomicLongArray(size);
    }

    void record(long delta) {
      int slot = (int) Math.floorMod(cursor.getAndIncrement(), (long) slots.length());
      long old = slots.getAndSet(slot, delta);
      totals.getAndAdd(delta - old);
    }
  }
}
