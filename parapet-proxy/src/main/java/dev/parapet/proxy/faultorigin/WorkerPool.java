package dev.parapet.proxy.faultorigin;

import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayDeque;

/**
 * The origin's workers ({@code --workers N}): at most N requests are being worked on at once,
 * across all connections; the others wait in one first-come-first-served queue, as in front of a
 * server with a fixed thread pool. A request holds its worker from the moment it starts until its
 * answer is written, or, for a hang, until its client closes the connection. A request whose client
 * left while it waited is still worked on when its turn comes (the origin cannot tell): this is the
 * simulator's {@code abandoned: serve}. Zero workers means no limit.
 *
 * <p>One lock guards the count and the queue; the work itself always runs on its connection's event
 * loop, so a handler never touches another connection's state.
 */
final class WorkerPool {
  private final int workers;
  private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
  private int busy;

  WorkerPool(int workers) {
    if (workers < 0) {
      throw new IllegalArgumentException("workers : " + workers + " (expected: >= 0)");
    }
    this.workers = workers;
  }

  /** Runs {@code start} on {@code executor} once a worker is free (at once when one is). */
  void acquire(EventExecutor executor, Runnable start) {
    if (workers == 0) {
      start.run();
      return;
    }
    boolean now;
    synchronized (this) {
      now = busy < workers;
      if (now) {
        busy++;
      } else {
        waiting.add(() -> executor.execute(start));
      }
    }
    if (now) {
      start.run();
    }
  }

  /** Gives a worker back: the longest-waiting request, if any, takes it. */
  void release() {
    if (workers == 0) {
      return;
    }
    Runnable next;
    synchronized (this) {
      next = waiting.poll();
      if (next == null) {
        busy--;
      }
    }
    if (next != null) {
      next.run();
    }
  }

  synchronized int busy() {
    return busy;
  }

  synchronized int queued() {
    return waiting.size();
  }
}
