package dev.parapet.proxy.flow;

import dev.parapet.core.time.Ticker;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The attempt timeouts of one event loop: one scheduled check instead of a timer per attempt.
 *
 * <p>Attempts waiting for their origin are kept in a list ordered by deadline, linked through the
 * attempts themselves (no node objects). One task is scheduled on the loop, no later than the
 * earliest deadline; when it runs it times out what is due and re-arms for the earliest that is
 * left. An attempt that ends in time only unlinks itself: the check armed for it mostly finds it
 * gone and re-arms for the current earliest, so in steady state a loop schedules about once per
 * timeout period instead of once per request. A timer per attempt cost a task object and a
 * priority-queue insert and removal per request on an edge that makes one attempt per request.
 *
 * <p>Deadlines come mostly in order (attempts of one origin share its timeout), so an attempt is
 * inserted walking back from the tail: one step in the common case. Deadlines are on the proxy's
 * {@link Ticker}, compared by subtraction. Confined to the loop.
 */
final class AttemptDeadlines {
  private static final FastThreadLocal<AttemptDeadlines> PER_THREAD = new FastThreadLocal<>();

  private final EventLoop loop;
  private final Ticker ticker;
  private @Nullable UpstreamAttempt head;
  private @Nullable UpstreamAttempt tail;
  private @Nullable ScheduledFuture<?> check;
  private long checkAt;

  private AttemptDeadlines(EventLoop loop, Ticker ticker) {
    this.loop = loop;
    this.ticker = ticker;
  }

  /** The deadlines of {@code loop}; must be called on it. */
  static AttemptDeadlines of(EventLoop loop, Ticker ticker) {
    AttemptDeadlines d = PER_THREAD.get();
    if (d == null || d.loop != loop || d.ticker != ticker) {
      // One per loop thread; another loop or clock on the same thread (tests) gets its own.
      d = new AttemptDeadlines(loop, ticker);
      PER_THREAD.set(d);
    }
    return d;
  }

  /** Times {@code a} out at {@code deadline} (ticker nanos) unless it is removed first. */
  void add(UpstreamAttempt a, long deadline) {
    a.dueAt = deadline;
    UpstreamAttempt after = tail;
    while (after != null && deadline - after.dueAt < 0) {
      after = after.duePrev;
    }
    a.duePrev = after;
    a.dueNext = after == null ? head : after.dueNext;
    if (a.dueNext != null) {
      a.dueNext.duePrev = a;
    } else {
      tail = a;
    }
    if (after != null) {
      after.dueNext = a;
    } else {
      head = a;
    }
    a.dueLinked = true;
    if (check == null || deadline - checkAt < 0) {
      arm(deadline);
    }
  }

  /** Forgets {@code a} (it ended in time); a no-op when it is not waiting. */
  void remove(UpstreamAttempt a) {
    if (!a.dueLinked) {
      return;
    }
    UpstreamAttempt p = a.duePrev;
    UpstreamAttempt n = a.dueNext;
    if (p != null) {
      p.dueNext = n;
    } else {
      head = n;
    }
    if (n != null) {
      n.duePrev = p;
    } else {
      tail = p;
    }
    a.duePrev = null;
    a.dueNext = null;
    a.dueLinked = false;
  }

  private void arm(long at) {
    ScheduledFuture<?> c = check;
    if (c != null) {
      c.cancel(false);
    }
    checkAt = at;
    check = loop.schedule(this::due, Math.max(1, at - ticker.read()), TimeUnit.NANOSECONDS);
  }

  /** The check: times out what is due, then re-arms for the earliest deadline left. */
  private void due() {
    check = null;
    long now = ticker.read();
    UpstreamAttempt a;
    while ((a = head) != null && a.dueAt - now <= 0) {
      remove(a);
      a.timedOut(); // may start a retry, which adds itself with a later deadline
    }
    UpstreamAttempt next = head;
    if (next != null && check == null) {
      arm(next.dueAt);
    }
  }
}
