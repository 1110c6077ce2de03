package dev.parapet.core.balance;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A small, fast 64-bit hash for ring points and client addresses, hand-written because the core has
 * no dependencies. Words of 8 bytes are mixed with the SplitMix64 / MurmurHash3 {@code fmix64}
 * finalizer and folded in with a multiply-rotate step (the shape of xxHash's round); the result
 * gets a final avalanche. It is not a cryptographic hash and not compatible with any published one.
 */
final class Hashing {
  private static final long GOLDEN = 0x9e3779b97f4a7c15L;
  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private Hashing() {}

  static long hash64(byte[] data) {
    return hash64(data, 0L);
  }

  static long hash64(byte[] data, long seed) {
    int length = data.length;
    long h = seed ^ (length * GOLDEN);
    int i = 0;
    for (; length - i >= 8; i += 8) {
      h ^= mix64((long) LONG_LE.get(data, i));
      h = Long.rotateLeft(h, 27) * GOLDEN + 0x52dce729L;
    }
    long tail = 0L;
    for (int shift = 0; i < length; i++, shift += 8) {
      tail |= (data[i] & 0xffL) << shift;
    }
    h ^= mix64(tail ^ 0x2545f4914f6cdd1dL);
    return mix64(h);
  }

  /** Stafford's variant 13 of MurmurHash3's fmix64 (as in SplitMix64): a full avalanche. */
  static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /** Maps a hash to {@code [0, 1)} using its top 53 bits. */
  static double unit(long hash) {
    return (hash >>> 11) * 0x1.0p-53;
  }

  /** Maps a hash to {@code [0, bound)} without division (Lemire's multiply-shift reduction). */
  static int reduce(long hash, int bound) {
    return (int) (((hash >>> 32) * bound) >>> 32);
  }
}
