package dev.parapet.sim.replay;

/** Records in start order, handed from the reader to the policies in one go. Reused. */
final class Batch {
  static final int CAPACITY = 8192;

  final long[] start = new long[CAPACITY];
  final long[] latency = new long[CAPACITY];
  final int[] route = new int[CAPACITY];
  final byte[] outcome = new byte[CAPACITY];
  int size;

  boolean isFull() {
    return size == CAPACITY;
  }

  void add(long s, long l, int r, byte o) {
    start[size] = s;
    latency[size] = l;
    route[size] = r;
    outcome[size] = o;
    size++;
  }
}
