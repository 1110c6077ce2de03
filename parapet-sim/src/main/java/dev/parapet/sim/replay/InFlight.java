package dev.parapet.sim.replay;

import dev.parapet.core.breaker.Permit;
import java.util.Arrays;

/**
 * The calls of one policy in flight, taken out in order of their end: ends first, then arrival
 * (ties between equal ends go by arrival).
 *
 * <p>How it works. Ends only ever come after the time the replay has reached (a call starts now and
 * ends later), so a calendar queue fits: a ring of {@link #BUCKETS} buckets of {@code 2^SHIFT} ns
 * (about a millisecond; 4.3 s in all) holds the ends near the present, each bucket an unsorted list
 * of slots in arrival order; the bucket being emptied is sorted (stably, by end) when it is read,
 * which is a few entries at a PoP's rate. Ends beyond the ring wait in a 4-ary heap ordered by
 * (end, arrival) and move into the ring, in that order, as it turns to them. A call costs an append
 * and its share of one small sort, where a heap of every call in flight paid a mispredicted
 * comparison per level on every removal. A slot holds the call's end, permit and outcome; free
 * slots are reused, so memory follows the calls in flight, never the log.
 */
final class InFlight {
  static final int SHIFT = 20;
  static final int BUCKETS = 1 << 12;
  private static final int MASK = BUCKETS - 1;
  private static final int POSITION_BITS = 43;

  // slots
  private long[] slotEnd = new long[256];
  private Permit[] slotPermit = new Permit[256];
  private byte[] slotOutcome = new byte[256];
  private int[] freeSlots = new int[256];
  private int freeCount;
  private int slotsUsed;

  // the ring: bucket number cur (end >> SHIFT) is at index cur & MASK; [head, sortedTo) of the
  // current bucket is sorted, [head, size) still to take
  private final int[][] buckets = new int[BUCKETS][];
  private final int[] bucketSize = new int[BUCKETS];
  private long cur = Long.MIN_VALUE;
  private int head;
  private int sortedTo;
  private int inRing;
  private long[] sortKeys = new long[0];

  // beyond the ring: a 4-ary min-heap of (end, arrival, slot)
  private long[] later = new long[16];
  private long[] laterSeq = new long[16];
  private int[] laterSlot = new int[16];
  private int laterSize;
  private long nextSeq;

  private int maxSize;

  private static final Permit NONE = new Permit();

  /** The call taken by the last {@link #pollBefore} that returned true. */
  long polledEnd;

  Permit polledPermit = NONE;
  byte polledOutcome;

  /** Adds a call ending at {@code end}, no earlier than the last {@link #pollBefore} time. */
  void push(long end, Permit permit, byte outcome) {
    int k = slot();
    slotEnd[k] = end;
    slotPermit[k] = permit;
    slotOutcome[k] = outcome;
    long bucket = end >> SHIFT;
    if (cur != Long.MIN_VALUE && bucket - cur < BUCKETS) {
      append(bucket, k);
    } else {
      pushLater(end, nextSeq, k);
    }
    nextSeq++;
    int size = inRing + laterSize;
    if (size > maxSize) {
      maxSize = size;
    }
  }

  /**
   * Takes the first call that ends before {@code now} into {@link #polledEnd}, {@link
   * #polledPermit} and {@link #polledOutcome}.
   *
   * @return false when no call ends before {@code now}
   */
  boolean pollBefore(long now) {
    long nowBucket = now >> SHIFT;
    for (; ; ) {
      if (inRing == 0) {
        if (laterSize == 0) {
          cur = Math.max(cur, nowBucket);
          return false;
        }
        // nothing in the ring: turn it at once to the present or to the next end beyond it
        cur = Math.max(cur, Math.min(nowBucket, later[0] >> SHIFT));
        moveIn();
        if (inRing == 0) {
          return false;
        }
      }
      int b = (int) (cur & MASK);
      int size = bucketSize[b];
      if (head < size) {
        if (sortedTo < size) {
          sort(b, size);
        }
        int k = buckets[b][head];
        long t = slotEnd[k];
        if (t >= now) {
          return false;
        }
        if (++head == size) {
          bucketSize[b] = 0;
          head = 0;
          sortedTo = 0;
        }
        inRing--;
        polledEnd = t;
        polledPermit = slotPermit[k];
        polledOutcome = slotOutcome[k];
        slotPermit[k] = null;
        freeSlots[freeCount++] = k;
        return true;
      }
      // the current bucket is empty: the next one holds ends from (cur + 1) << SHIFT on
      if (cur >= nowBucket) {
        return false;
      }
      cur++;
      moveIn();
    }
  }

  /** The most calls in flight at once. */
  int maxSize() {
    return maxSize;
  }

  /** Calls the slots can hold without growing: what memory is retained. */
  int capacity() {
    return slotEnd.length;
  }

  private int slot() {
    if (freeCount > 0) {
      return freeSlots[--freeCount];
    }
    if (slotsUsed == slotEnd.length) {
      int n = slotsUsed * 2;
      slotEnd = Arrays.copyOf(slotEnd, n);
      slotPermit = Arrays.copyOf(slotPermit, n);
      slotOutcome = Arrays.copyOf(slotOutcome, n);
      freeSlots = Arrays.copyOf(freeSlots, n);
    }
    return slotsUsed++;
  }

  private void append(long bucket, int k) {
    int b = (int) (bucket & MASK);
    int[] list = buckets[b];
    int size = bucketSize[b];
    if (list == null) {
      list = new int[16];
      buckets[b] = list;
    } else if (size == list.length) {
      list = Arrays.copyOf(list, size * 2);
      buckets[b] = list;
    }
    list[size] = k;
    bucketSize[b] = size + 1;
    inRing++;
  }

  /** Moves the ends that the ring now covers in from the heap, in (end, arrival) order. */
  private void moveIn() {
    while (laterSize > 0 && (later[0] >> SHIFT) - cur < BUCKETS) {
      long t = later[0];
      int k = laterSlot[0];
      removeFirstLater();
      append(t >> SHIFT, k);
    }
  }

  /**
   * Sorts the current bucket's entries still to take by end, stably (equal ends stay in arrival
   * order, which is the order they were appended in); its sorted prefix is usually most of it.
   */
  private void sort(int b, int size) {
    int[] list = buckets[b];
    int n = size - head;
    if (n <= 32 || size - sortedTo <= 2) {
      for (int i = Math.max(sortedTo, head + 1); i < size; i++) {
        int k = list[i];
        long t = slotEnd[k];
        int j = i - 1;
        while (j >= head && slotEnd[list[j]] > t) {
          list[j + 1] = list[j];
          j--;
        }
        list[j + 1] = k;
      }
    } else {
      // (offset of the end in the bucket, position): distinct keys, so the sort is stable
      if (sortKeys.length < n) {
        sortKeys = new long[Math.max(n, 2 * sortKeys.length)];
      }
      long from = cur << SHIFT;
      for (int i = 0; i < n; i++) {
        sortKeys[i] = ((slotEnd[list[head + i]] - from) << POSITION_BITS) | i;
      }
      Arrays.sort(sortKeys, 0, n);
      int[] copy = Arrays.copyOfRange(list, head, size);
      for (int i = 0; i < n; i++) {
        list[head + i] = copy[(int) (sortKeys[i] & ((1L << POSITION_BITS) - 1))];
      }
    }
    sortedTo = size;
  }

  private static boolean before(long t1, long q1, long t2, long q2) {
    return t1 < t2 || (t1 == t2 && q1 < q2);
  }

  private void pushLater(long t, long q, int k) {
    if (laterSize == later.length) {
      later = Arrays.copyOf(later, laterSize * 2);
      laterSeq = Arrays.copyOf(laterSeq, laterSize * 2);
      laterSlot = Arrays.copyOf(laterSlot, laterSize * 2);
    }
    int i = laterSize++;
    while (i > 0) {
      int parent = (i - 1) >>> 2;
      if (!before(t, q, later[parent], laterSeq[parent])) {
        break;
      }
      later[i] = later[parent];
      laterSeq[i] = laterSeq[parent];
      laterSlot[i] = laterSlot[parent];
      i = parent;
    }
    later[i] = t;
    laterSeq[i] = q;
    laterSlot[i] = k;
  }

  private void removeFirstLater() {
    int last = --laterSize;
    if (last == 0) {
      return;
    }
    long lt = later[last];
    long lq = laterSeq[last];
    int lk = laterSlot[last];
    int i = 0;
    for (; ; ) {
      int c = 4 * i + 1;
      if (c >= last) {
        break;
      }
      int best = c;
      int stop = Math.min(c + 4, last);
      for (int j = c + 1; j < stop; j++) {
        if (before(later[j], laterSeq[j], later[best], laterSeq[best])) {
          best = j;
        }
      }
      if (!before(later[best], laterSeq[best], lt, lq)) {
        break;
      }
      later[i] = later[best];
      laterSeq[i] = laterSeq[best];
      laterSlot[i] = laterSlot[best];
      i = best;
    }
    later[i] = lt;
    laterSeq[i] = lq;
    laterSlot[i] = lk;
  }
}
