package dev.parapet.sim;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The discrete-event loop: events fire in (virtual time, sequence number) order; the loop takes the
 * earliest, sets the clock to its time and fires it. Nothing reads a wall clock and all randomness
 * comes from one seeded {@link SimRandom} consumed in event order, so the same seed gives the same
 * run, byte for byte (the core's policies take {@code nowNanos} and an injected random source for
 * exactly this reason: DESIGN "the simulator and the tests drive the very code that runs in
 * production").
 *
 * <p>How the queue works: a calendar queue (Brown 1988) in the shape of a timing wheel, with an
 * exact order. Virtual time is cut into buckets of 2^20 ns (about 1 ms); a wheel of 2^14 slots
 * covers the next 17 s. Scheduling appends the event's id and time, packed in one {@code long}, to
 * its slot (linked chunks of one pooled {@code long[]}: no allocation, no pointer stored). When the
 * clock reaches a bucket, the slot's entries are sorted as packed {@code long}s ((time within the
 * bucket) << 32 | position), and fire in that order. Position is append order, which is sequence
 * order, so ties at the same nanosecond keep the order they were scheduled in, as they must. Events
 * scheduled into the current bucket while it fires go to a small binary heap, {@code due}, merged
 * with the sorted run; events beyond the wheel wait in a second heap, {@code later}, and join their
 * bucket when it comes (before its slot's entries: they were scheduled earlier). The order is
 * exactly that of one global priority queue ordered by (time, sequence number).
 *
 * <p>Why: the 300-PoP scenario keeps up to 2 million requests in flight. A binary heap of them, or
 * a list threaded through the event objects, turns every step into a cache miss on an object that
 * is not needed yet. Here an event object is touched only when its bucket comes, and all of a
 * bucket's events are touched in one tight loop before the first fires ({@link SimEvent#touch}), so
 * that their cache misses overlap instead of stalling one event at a time.
 */
final class Engine {
  private static final int BUCKET_SHIFT = 20;
  private static final int WHEEL = 1 << 14;
  private static final int MASK = WHEEL - 1;
  private static final long BUCKET_MASK = (1L << BUCKET_SHIFT) - 1;
  private static final int CHUNK = 256;

  private final SimRandom random;
  private @Nullable SimEvent[] byId = new SimEvent[4096];
  private int nextId;
  // Wheel slots: linked chunks of CHUNK packed entries ((time within bucket) << 32 | event id) in
  // one pooled array; chunk c is pool[c * CHUNK, (c + 1) * CHUNK). -1 is "none".
  private final int[] slotHead = new int[WHEEL];
  private final int[] slotTail = new int[WHEEL];
  private long[] pool = new long[64 * CHUNK];
  private int[] chunkSize = new int[64];
  private int[] chunkNext = new int[64];
  private int chunks;
  private int freeChunk = -1;
  private long wheelCount;
  private final EventHeap due = new EventHeap();
  private final EventHeap later = new EventHeap();

  // The bucket being fired, sorted.
  private long[] keys = new long[1024];
  private int[] runIds = new int[1024];
  private int[] scratchIds = new int[1024];
  private long[] runAt = new long[1024];
  private int runSize;
  private int runPos;

  private long currentBucket;
  private long now;
  private long nextSeq;
  private long fired;
  private long touched;
  private double spareGaussian;
  private boolean hasSpareGaussian;

  Engine(long seed) {
    this.random = new SimRandom(seed);
    Arrays.fill(slotHead, -1);
    Arrays.fill(slotTail, -1);
  }

  SimRandom random() {
    return random;
  }

  long now() {
    return now;
  }

  long firedCount() {
    return fired;
  }

  /**
   * Schedules {@code event} at {@code atNanos} (not before now; virtual time starts at 0 and only
   * grows, so times are compared directly). An event is in the queue at most once at a time.
   */
  void schedule(SimEvent event, long atNanos) {
    long at = atNanos < now ? now : atNanos;
    event.at = at;
    int id = event.id;
    if (id < 0) {
      id = register(event);
    }
    long bucket = at >>> BUCKET_SHIFT;
    if (bucket <= currentBucket) {
      due.add(at, nextSeq++, id);
    } else if (bucket - currentBucket < WHEEL) {
      int slot = (int) (bucket & MASK);
      int c = slotTail[slot];
      if (c < 0 || chunkSize[c] == CHUNK) {
        int fresh = newChunk();
        if (c < 0) {
          slotHead[slot] = fresh;
        } else {
          chunkNext[c] = fresh;
        }
        slotTail[slot] = fresh;
        c = fresh;
      }
      pool[c * CHUNK + chunkSize[c]++] = ((at & BUCKET_MASK) << 32) | id;
      wheelCount++;
    } else {
      later.add(at, nextSeq++, id);
    }
  }

  private int newChunk() {
    int c = freeChunk;
    if (c >= 0) {
      freeChunk = chunkNext[c];
    } else {
      if (chunks == chunkSize.length) {
        chunkSize = Arrays.copyOf(chunkSize, chunks * 2);
        chunkNext = Arrays.copyOf(chunkNext, chunks * 2);
        pool = Arrays.copyOf(pool, chunks * 2 * CHUNK);
      }
      c = chunks++;
    }
    chunkSize[c] = 0;
    chunkNext[c] = -1;
    return c;
  }

  private int register(SimEvent event) {
    if (nextId == byId.length) {
      byId = Arrays.copyOf(byId, nextId * 2);
    }
    event.id = nextId;
    byId[nextId] = event;
    return nextId++;
  }

  /** Fires events in order until none is left or the next one is after {@code endNanos}. */
  void runUntil(long endNanos) {
    while (true) {
      if (runPos == runSize && due.isEmpty() && !advance()) {
        break;
      }
      int id;
      long at;
      if (runPos < runSize && (due.isEmpty() || runAt[runPos] <= due.peekAt())) {
        at = runAt[runPos];
        if (at > endNanos) {
          break;
        }
        id = runIds[runPos++];
      } else {
        at = due.peekAt();
        if (at > endNanos) {
          break;
        }
        id = due.poll();
      }
      SimEvent e = eventAt(id);
      now = at;
      fired++;
      e.fire(at);
    }
    if (endNanos > now) {
      now = endNanos;
    }
  }

  private SimEvent eventAt(int id) {
    SimEvent e = byId[id];
    if (e == null) {
      throw new IllegalStateException("event " + id + " : unregistered (expected: scheduled)");
    }
    return e;
  }

  /**
   * Moves to the next bucket that holds events and sorts its entries into the run; false when no
   * event is left. Called only when the run and {@code due} are empty.
   */
  private boolean advance() {
    long next = Long.MAX_VALUE;
    if (wheelCount > 0) {
      for (long b = currentBucket + 1; b - currentBucket < WHEEL; b++) {
        if (slotHead[(int) (b & MASK)] >= 0) {
          next = b;
          break;
        }
      }
    }
    if (!later.isEmpty()) {
      next = Math.min(next, later.peekAt() >>> BUCKET_SHIFT);
    }
    if (next == Long.MAX_VALUE) {
      return false;
    }
    currentBucket = next;
    runSize = 0;
    runPos = 0;
    // Later entries first: they were scheduled before any entry of this bucket's slot.
    while (!later.isEmpty() && (later.peekAt() >>> BUCKET_SHIFT) <= next) {
      long at = later.peekAt();
      append(later.poll(), at);
    }
    // Every wheel entry's bucket lies in (previous bucket, previous bucket + WHEEL), one bucket
    // per slot, so this slot holds exactly the entries of bucket next (or none).
    long base = next << BUCKET_SHIFT;
    int slot = (int) (next & MASK);
    int c = slotHead[slot];
    slotHead[slot] = -1;
    slotTail[slot] = -1;
    while (c >= 0) {
      int size = chunkSize[c];
      for (int i = c * CHUNK, end = i + size; i < end; i++) {
        long entry = pool[i];
        append((int) entry, base + (entry >>> 32));
      }
      wheelCount -= size;
      int n = chunkNext[c];
      chunkNext[c] = freeChunk;
      freeChunk = c;
      c = n;
    }
    for (int i = 0; i < runSize; i++) {
      keys[i] = ((runAt[i] - base) << 32) | i;
    }
    Arrays.sort(keys, 0, runSize);
    // Reorder ids and times by the sorted keys (through the key array's low bits).
    if (runSize > 1) {
      System.arraycopy(runIds, 0, scratchIds, 0, runSize);
      for (int i = 0; i < runSize; i++) {
        runIds[i] = scratchIds[(int) keys[i]];
        runAt[i] = base + (keys[i] >>> 32);
      }
    }
    // Touch every event of the bucket in a tight loop before any fires: the loads are independent,
    // so their cache misses overlap (a few hundred in flight at 300 PoPs) instead of stalling one
    // event at a time.
    long t = 0;
    for (int i = 0; i < runSize; i++) {
      t += eventAt(runIds[i]).touch();
    }
    touched += t;
    return true;
  }

  private void append(int id, long at) {
    if (runSize == runIds.length) {
      int n = runSize * 2;
      runIds = Arrays.copyOf(runIds, n);
      runAt = Arrays.copyOf(runAt, n);
      keys = Arrays.copyOf(keys, n);
      scratchIds = new int[n];
    }
    runIds[runSize] = id;
    runAt[runSize] = at;
    runSize++;
  }

  /** Keeps the look-ahead loads observable (never read otherwise). */
  long touched() {
    return touched;
  }

  /**
   * A standard normal deviate from the engine's random source: Box–Muller, whose two outputs per
   * pair of uniforms are both used (the second is kept for the next call).
   */
  double nextGaussian() {
    if (hasSpareGaussian) {
      hasSpareGaussian = false;
      return spareGaussian;
    }
    double u1 = random.nextDouble();
    double u2 = random.nextDouble();
    double r = Math.sqrt(-2.0 * Math.log(1.0 - u1));
    double a = 2.0 * Math.PI * u2;
    spareGaussian = r * Math.sin(a);
    hasSpareGaussian = true;
    return r * Math.cos(a);
  }

  /** A binary min-heap of event ids by (time, sequence number), all in primitive arrays. */
  private static final class EventHeap {
    private long[] at = new long[256];
    private long[] seq = new long[256];
    private int[] ids = new int[256];
    private int size;

    boolean isEmpty() {
      return size == 0;
    }

    long peekAt() {
      return at[0];
    }

    void add(long a, long s, int id) {
      if (size == ids.length) {
        int n = size * 2;
        at = Arrays.copyOf(at, n);
        seq = Arrays.copyOf(seq, n);
        ids = Arrays.copyOf(ids, n);
      }
      int i = size++;
      while (i > 0) {
        int p = (i - 1) >>> 1;
        if (a > at[p] || (a == at[p] && s > seq[p])) {
          break;
        }
        at[i] = at[p];
        seq[i] = seq[p];
        ids[i] = ids[p];
        i = p;
      }
      at[i] = a;
      seq[i] = s;
      ids[i] = id;
    }

    /** Removes the earliest entry and returns its event id. */
    int poll() {
      int top = ids[0];
      int n = --size;
      long a = at[n];
      long s = seq[n];
      int last = ids[n];
      int i = 0;
      int half = n >>> 1;
      while (i < half) {
        int c = 2 * i + 1;
        int r = c + 1;
        if (r < n && (at[r] < at[c] || (at[r] == at[c] && seq[r] < seq[c]))) {
          c = r;
        }
        if (a < at[c] || (a == at[c] && s < seq[c])) {
          break;
        }
        at[i] = at[c];
        seq[i] = seq[c];
        ids[i] = ids[c];
        i = c;
      }
      if (n > 0) {
        at[i] = a;
        seq[i] = s;
        ids[i] = last;
      }
      return top;
    }
  }
}
