package dev.parapet.sim.replay;

import java.util.Arrays;

/**
 * Route names to small ids, looked up from the bytes of a line: a known route costs a hash and a
 * compare, no String. Open addressing with linear probing; the table doubles at half load.
 */
final class RouteTable {
  private final int maxRoutes;
  private int[] slots = new int[64]; // id + 1, 0 = empty
  private int[] hashes = new int[64];
  private byte[][] bytes = new byte[16][];
  private String[] names = new String[16];
  private int size;

  RouteTable(int maxRoutes) {
    this.maxRoutes = maxRoutes;
  }

  /** The id of the route spelled {@code b[from, to)}, added if new. */
  int id(byte[] b, int from, int to) {
    int h = 1;
    for (int i = from; i < to; i++) {
      h = 31 * h + b[i];
    }
    h ^= h >>> 16;
    int mask = slots.length - 1;
    for (int i = h & mask; ; i = (i + 1) & mask) {
      int s = slots[i];
      if (s == 0) {
        return add(b, from, to, h, i);
      }
      if (hashes[i] == h && same(bytes[s - 1], b, from, to)) {
        return s - 1;
      }
    }
  }

  private static boolean same(byte[] name, byte[] b, int from, int to) {
    if (name.length != to - from) {
      return false;
    }
    for (int i = 0; i < name.length; i++) { // route names are short: a loop beats the intrinsic
      if (name[i] != b[from + i]) {
        return false;
      }
    }
    return true;
  }

  private int add(byte[] b, int from, int to, int h, int slot) {
    if (size >= maxRoutes) {
      throw new BadLineException(
          "route : "
              + Scan.text(b, from, to)
              + " is one more than "
              + maxRoutes
              + " (expected: a bounded set of route names)");
    }
    if (size == bytes.length) {
      bytes = Arrays.copyOf(bytes, size * 2);
      names = Arrays.copyOf(names, size * 2);
    }
    int id = size++;
    bytes[id] = Arrays.copyOfRange(b, from, to);
    names[id] = Scan.text(b, from, to);
    slots[slot] = id + 1;
    hashes[slot] = h;
    if (size * 2 > slots.length) {
      rehash();
    }
    return id;
  }

  private void rehash() {
    int[] oldSlots = slots;
    int[] oldHashes = hashes;
    slots = new int[oldSlots.length * 2];
    hashes = new int[oldSlots.length * 2];
    int mask = slots.length - 1;
    for (int j = 0; j < oldSlots.length; j++) {
      if (oldSlots[j] != 0) {
        int i = oldHashes[j] & mask;
        while (slots[i] != 0) {
          i = (i + 1) & mask;
        }
        slots[i] = oldSlots[j];
        hashes[i] = oldHashes[j];
      }
    }
  }

  String name(int id) {
    return names[id];
  }

  int size() {
    return size;
  }
}
