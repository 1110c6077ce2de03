package dev.parapet.sim;

import dev.parapet.core.exchange.ExchangeHooks.Timer;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * A pooled engine event that wakes a {@link SimRequest}: at the end of one of its attempts ({@code
 * attempt} set), or when one of its timers is due. A cancelled timer has no request any more: when
 * it fires it only goes back to the pool. The engine keeps every event it has seen (its queue holds
 * ids), so requests and attempts, made anew for each request, are never events themselves; these
 * few objects are, reused for as long as the run lasts.
 */
final class Wakeup extends SimEvent {
  private final Pool pool;
  @Nullable SimRequest request;
  @Nullable SimAttempt attempt;
  Timer timer = Timer.RETRY;

  private Wakeup(Pool pool) {
    this.pool = pool;
  }

  @Override
  void fire(long now) {
    SimRequest r = request;
    SimAttempt a = attempt;
    request = null;
    attempt = null;
    pool.release(this); // before the request runs: it may schedule this very object again
    if (r == null) {
      return;
    }
    if (a != null) {
      r.attemptEnded(a, now);
    } else {
      r.timerDue(timer, now);
    }
  }

  @Override
  long touch() {
    // The request and the attempt that fire() hands over, so that their cache misses overlap.
    SimRequest r = request;
    SimAttempt a = attempt;
    long t = at;
    if (r != null) {
      t += r.touch();
    }
    if (a != null) {
      t += a.state().ordinal() + a.sentNanos();
    }
    return t;
  }

  /** The free wakeups, a stack: the last one freed is the next one used (warm in cache). */
  static final class Pool {
    private Wakeup[] free = new Wakeup[1024];
    private int size;

    Wakeup obtain() {
      return size == 0 ? new Wakeup(this) : free[--size];
    }

    void release(Wakeup w) {
      if (size == free.length) {
        free = Arrays.copyOf(free, size * 2);
      }
      free[size++] = w;
    }
  }
}
