package dev.parapet.sim.replay;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/** Hands each batch of records to every policy: on the reading thread, or on worker threads. */
abstract class Dispatcher implements AutoCloseable {
  /** Feeds {@code b}; returns an empty batch to fill next (the same one, or a free one). */
  abstract Batch dispatch(Batch b);

  /** Waits until every batch is fed, then completes every policy's calls in flight. */
  abstract void finish();

  @Override
  public void close() {}

  /** Every policy on the reading thread. */
  static final class Inline extends Dispatcher {
    private final List<PolicyRun> runs;

    Inline(List<PolicyRun> runs) {
      this.runs = runs;
    }

    @Override
    Batch dispatch(Batch b) {
      for (PolicyRun r : runs) {
        r.feed(b);
      }
      return b;
    }

    @Override
    void finish() {
      for (PolicyRun r : runs) {
        r.finish();
      }
    }
  }

  /**
   * The policies spread over worker threads; the reader parses the next batch while they replay
   * this one. A batch goes to every worker and back to the free pool when the last is done with it,
   * so the batches in use are bounded ({@link #BATCHES}): a slow policy slows the reader down
   * rather than letting records pile up.
   */
  static final class Threaded extends Dispatcher {
    static final int BATCHES = 8;
    private static final Batch END = new Batch();

    private final BlockingQueue<Batch> free = new ArrayBlockingQueue<>(BATCHES);
    private final List<BlockingQueue<Batch>> queues = new ArrayList<>();
    private final List<Thread> workers = new ArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final java.util.Map<Batch, AtomicInteger> pending =
        new java.util.concurrent.ConcurrentHashMap<>();
    private boolean finished;

    Threaded(List<PolicyRun> runs, int threads) {
      int n = Math.min(threads, runs.size());
      for (int i = 1; i < BATCHES; i++) {
        free.add(new Batch());
      }
      for (int w = 0; w < n; w++) {
        List<PolicyRun> mine = new ArrayList<>();
        for (int i = w; i < runs.size(); i += n) {
          mine.add(runs.get(i));
        }
        BlockingQueue<Batch> q = new ArrayBlockingQueue<>(BATCHES + 1);
        queues.add(q);
        Thread t = new Thread(() -> work(q, mine), "replay-policies-" + w);
        t.setDaemon(true);
        workers.add(t);
        t.start();
      }
    }

    private void work(BlockingQueue<Batch> q, List<PolicyRun> mine) {
      try {
        for (; ; ) {
          Batch b = q.take();
          if (b == END) {
            for (PolicyRun r : mine) {
              r.finish();
            }
            return;
          }
          if (failure.get() == null) {
            for (PolicyRun r : mine) {
              r.feed(b);
            }
          }
          AtomicInteger left = pending.get(b);
          if (left != null && left.decrementAndGet() == 0) {
            pending.remove(b);
            free.add(b);
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException | Error e) {
        failure.compareAndSet(null, e);
        // keep draining so the reader never waits for this worker
        drain(q);
      }
    }

    private void drain(BlockingQueue<Batch> q) {
      try {
        for (; ; ) {
          Batch b = q.take();
          if (b == END) {
            return;
          }
          AtomicInteger left = pending.get(b);
          if (left != null && left.decrementAndGet() == 0) {
            pending.remove(b);
            free.add(b);
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    Batch dispatch(Batch b) {
      rethrow();
      pending.put(b, new AtomicInteger(queues.size()));
      try {
        for (BlockingQueue<Batch> q : queues) {
          q.put(b);
        }
        Batch next = free.take();
        next.size = 0;
        return next;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("replay : interrupted (expected: to finish)", e);
      }
    }

    @Override
    void finish() {
      finished = true;
      try {
        for (BlockingQueue<Batch> q : queues) {
          q.put(END);
        }
        for (Thread t : workers) {
          t.join();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("replay : interrupted (expected: to finish)", e);
      }
      rethrow();
    }

    private void rethrow() {
      Throwable t = failure.get();
      if (t instanceof RuntimeException r) {
        throw r;
      }
      if (t instanceof Error e) {
        throw e;
      }
    }

    @Override
    public void close() {
      if (!finished) {
        for (Thread t : workers) {
          t.interrupt();
        }
      }
    }
  }
}
