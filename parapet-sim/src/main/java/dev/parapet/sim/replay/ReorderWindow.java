package dev.parapet.sim.replay;

import java.util.Arrays;

/**
 * Puts roughly ordered records in start order with bounded memory.
 *
 * <p>How it works. Records wait in a binary min-heap of parallel primitive arrays, ordered by
 * (start, arrival). Each record also carries its <em>key</em>, the time the log was ordered by (the
 * start, or the end for logs written at completion). Once the log's key has moved past a record's
 * start by the horizon — the window, plus the longest latency for logs keyed by the end — no record
 * read later may start before it, and it is released. A record whose key is older than the newest
 * key by more than the window, or that starts before a record already released, would have to go
 * back in time: it is counted as late and dropped, never reordered silently. The heap holds the
 * records of one horizon at most, so its size depends on the rate, never on the length of the log.
 */
final class ReorderWindow {
  private final long windowNanos;
  private long[] start = new long[1024];
  private long[] latency = new long[1024];
  private long[] seq = new long[1024];
  private int[] route = new int[1024];
  private byte[] outcome = new byte[1024];
  private int size;
  // the in-order run: a ring of records whose starts never decrease
  private long[] rStart = new long[1024];
  private long[] rLatency = new long[1024];
  private long[] rSeq = new long[1024];
  private int[] rRoute = new int[1024];
  private byte[] rOutcome = new byte[1024];
  private int rHead;
  private int rSize;
  private boolean fromRing;
  private int maxSize;
  private long nextSeq;
  private long maxKey = Long.MIN_VALUE;
  private long released = Long.MIN_VALUE;
  private long late;

  ReorderWindow(long windowNanos) {
    this.windowNanos = windowNanos;
  }

  /**
   * Offers a record keyed by {@code key}.
   *
   * @return false when the record is late (counted, dropped)
   */
  boolean offer(long startNanos, long latencyNanos, int routeId, byte outcomeCode, long key) {
    if (maxKey != Long.MIN_VALUE && (key < maxKey - windowNanos || startNanos < released)) {
      late++;
      return false;
    }
    if (key > maxKey) {
      maxKey = key;
    }
    long s = nextSeq++;
    if (rSize == 0 || startNanos >= rStart[(rHead + rSize - 1) & (rStart.length - 1)]) {
      if (rSize == rStart.length) {
        growRing();
      }
      int j = (rHead + rSize++) & (rStart.length - 1);
      rStart[j] = startNanos;
      rLatency[j] = latencyNanos;
      rSeq[j] = s;
      rRoute[j] = routeId;
      rOutcome[j] = outcomeCode;
      noteSize();
      pick();
      return true;
    }
    if (size == start.length) {
      grow();
    }
    int i = size++;
    // sift up
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      if (!less(startNanos, s, start[parent], seq[parent])) {
        break;
      }
      move(parent, i);
      i = parent;
    }
    set(i, startNanos, latencyNanos, s, routeId, outcomeCode);
    noteSize();
    pick();
    return true;
  }

  private void noteSize() {
    if (size + rSize > maxSize) {
      maxSize = size + rSize;
    }
  }

  /** Points the peek methods at the earlier of the ring's head and the heap's top. */
  private void pick() {
    if (rSize == 0) {
      fromRing = false;
    } else if (size == 0) {
      fromRing = true;
    } else {
      fromRing = less(rStart[rHead], rSeq[rHead], start[0], seq[0]);
    }
  }

  private void growRing() {
    int n = rStart.length;
    long[] s = new long[2 * n];
    long[] l = new long[2 * n];
    long[] q = new long[2 * n];
    int[] r = new int[2 * n];
    byte[] o = new byte[2 * n];
    for (int k = 0; k < rSize; k++) {
      int j = (rHead + k) & (n - 1);
      s[k] = rStart[j];
      l[k] = rLatency[j];
      q[k] = rSeq[j];
      r[k] = rRoute[j];
      o[k] = rOutcome[j];
    }
    rStart = s;
    rLatency = l;
    rSeq = q;
    rRoute = r;
    rOutcome = o;
    rHead = 0;
  }

  /** True when the earliest record may go: nothing still to come can start before it. */
  boolean ready(long horizonNanos) {
    return !isEmpty() && peekStart() <= maxKey - horizonNanos;
  }

  boolean isEmpty() {
    return size == 0 && rSize == 0;
  }

  long peekStart() {
    return fromRing ? rStart[rHead] : start[0];
  }

  long peekLatency() {
    return fromRing ? rLatency[rHead] : latency[0];
  }

  int peekRoute() {
    return fromRing ? rRoute[rHead] : route[0];
  }

  byte peekOutcome() {
    return fromRing ? rOutcome[rHead] : outcome[0];
  }

  /** Removes the earliest record (read it with the peek methods first). */
  void pop() {
    released = peekStart();
    if (fromRing) {
      rHead = (rHead + 1) & (rStart.length - 1);
      rSize--;
    } else {
      popHeap();
    }
    pick();
  }

  private void popHeap() {
    int last = --size;
    if (last == 0) {
      return;
    }
    long ls = start[last];
    long lq = seq[last];
    long ll = latency[last];
    int lr = route[last];
    byte lo = outcome[last];
    int i = 0;
    for (; ; ) {
      int child = 2 * i + 1;
      if (child >= last) {
        break;
      }
      if (child + 1 < last && less(start[child + 1], seq[child + 1], start[child], seq[child])) {
        child++;
      }
      if (!less(start[child], seq[child], ls, lq)) {
        break;
      }
      move(child, i);
      i = child;
    }
    set(i, ls, ll, lq, lr, lo);
  }

  private static boolean less(long s1, long q1, long s2, long q2) {
    return s1 < s2 || (s1 == s2 && q1 < q2);
  }

  private void move(int from, int to) {
    start[to] = start[from];
    latency[to] = latency[from];
    seq[to] = seq[from];
    route[to] = route[from];
    outcome[to] = outcome[from];
  }

  private void set(int i, long s, long l, long q, int r, byte o) {
    start[i] = s;
    latency[i] = l;
    seq[i] = q;
    route[i] = r;
    outcome[i] = o;
  }

  private void grow() {
    int n = start.length * 2;
    start = Arrays.copyOf(start, n);
    latency = Arrays.copyOf(latency, n);
    seq = Arrays.copyOf(seq, n);
    route = Arrays.copyOf(route, n);
    outcome = Arrays.copyOf(outcome, n);
  }

  /** Records dropped as late. */
  long late() {
    return late;
  }

  /** The most records held at once. */
  int maxSize() {
    return maxSize;
  }

  /** Capacity of the arrays: what memory the window retains. */
  int capacity() {
    return start.length + rStart.length;
  }

  long windowNanos() {
    return windowNanos;
  }
}
