package dev.parapet.core.fleet;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A token bucket as the generic cell rate algorithm (GCRA, from ATM traffic policing; the form rate
 * limiters like redis-cell use): one "theoretical arrival time" instead of a token count and a
 * timestamp, so taking a token is one compare-and-set on one {@code long}.
 *
 * <p>Each token moves the arrival time one emission interval {@code T = 1 s / rate} later, starting
 * from now when the bucket was idle; a token is refused when that would put the arrival time more
 * than {@code burst × T} ahead of now. Over any window of {@code W} nanoseconds it grants at most
 * {@code W / T + burst} tokens. The interval is rounded up, so it never grants faster than the
 * rate. Times are compared by subtraction: readings may wrap.
 */
final class LocalTokenBucket {
  private final long intervalNanos;
  private final long horizonNanos;
  private final AtomicLong arrival;

  LocalTokenBucket(double ratePerSecond, int burst, long nowNanos) {
    this.intervalNanos = Math.max(1, (long) Math.ceil(1e9 / ratePerSecond));
    this.horizonNanos = Math.multiplyExact(intervalNanos, (long) burst);
    this.arrival = new AtomicLong(nowNanos);
  }

  /** Takes a token if the bucket has one at {@code nowNanos}. */
  boolean tryAcquire(long nowNanos) {
    while (true) {
      long tat = arrival.get();
      long from = tat - nowNanos < 0 ? nowNanos : tat;
      long next = from + intervalNanos;
      if (next - nowNanos > horizonNanos) {
        return false;
      }
      if (arrival.compareAndSet(tat, next)) {
        return true;
      }
    }
  }

  /** Nanoseconds until a token is free at {@code nowNanos} (0 when one is free now). */
  long waitNanos(long nowNanos) {
    long over = arrival.get() + intervalNanos - nowNanos - horizonNanos;
    return Math.max(0, over);
  }
}
