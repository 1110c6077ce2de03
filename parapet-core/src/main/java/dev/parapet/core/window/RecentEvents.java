package dev.parapet.core.window;

import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Whether at least {@code count} events happened within the last {@code within}: the breaker's fast
 * trip (seed 004: "if we can't even establish a TCP connection 3 times in 10 seconds, that origin
 * is isolated immediately") and its flapping detector ("more than 15-20 times an hour").
 *
 * <p>How it works: a ring of the last {@code count} event times; the condition holds when the ring
 * is full and its oldest entry is no older than {@code within}. Memory is {@code count} longs and
 * needs no volume minimum. Times are compared by subtraction (wrap-safe).
 */
public final class RecentEvents {
  private final int count;
  private final long withinNanos;
  private volatile Ring ring;

  /** Holds when {@code count} events happened within {@code within}. */
  public RecentEvents(int count, Duration within) {
    if (count < 1 || count > 10_000) {
      throw new IllegalArgumentException("count : " + count + " (expected: in [1, 10000])");
    }
    this.count = count;
    this.withinNanos = Durations.positiveNanos("within", within);
    this.ring = new Ring(count);
  }

  /** Records an event at {@code nowNanos} and tells whether the condition now holds. */
  public boolean record(long nowNanos) {
    Ring r = ring;
    long n = r.cursor.getAndIncrement();
    r.times.set((int) (n % count), nowNanos);
    return holds(r, n + 1, nowNanos);
  }

  /** Whether {@code count} events happened within {@code within} before {@code nowNanos}. */
  public boolean holds(long nowNanos) {
    Ring r = ring;
    return holds(r, r.cursor.get(), nowNanos);
  }

  /** How many of the recorded events (at most {@code count}) lie within the span. */
  public int recent(long nowNanos) {
    Ring r = ring;
    long n = Math.min(r.cursor.get(), count);
    int recent = 0;
    for (int i = 0; i < n; i++) {
      long age = nowNanos - r.times.get(i);
      if (age >= 0 && age <= withinNanos) {
        recent++;
      }
    }
    return recent;
  }

  /** Forgets all events. */
  public void reset() {
    ring = new Ring(count);
  }

  private boolean holds(Ring r, long recorded, long nowNanos) {
    if (recorded < count) {
      return false;
    }
    for (int i = 0; i < count; i++) {
      long age = nowNanos - r.times.get(i);
      if (age > withinNanos) {
        return false;
      }
    }
    return true;
  }

  private static final class Ring {
    final AtomicLongArray times;
    final AtomicLong cursor = new AtomicLong();

    Ring(int count) {
      this.times = new AtomicLongArray(count);
    }
  }
}
