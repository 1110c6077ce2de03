package dev.parapet.proxy.http1;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Byte searches and tests over a head's bytes, shared by the request and response decoders. The hot
 * searches ({@link #indexOfColon}, {@link #indexOfControl}) look at eight bytes at a time with the
 * classic SWAR "has a zero byte" test: {@code (x - 0x01..01) & ~x & 0x80..80} flags the bytes of
 * {@code x} that are zero, the lowest flag exactly.
 */
final class ByteScan {
  /** Little-endian longs out of a byte array, for the eight-bytes-at-a-time searches. */
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private static final long ONES = 0x0101010101010101L;
  private static final long HIGHS = 0x8080808080808080L;

  static boolean sameBytes(byte[] a, int start, int length, byte[] b, int bStart) {
    return Arrays.equals(a, start, start + length, b, bStart, bStart + length); // vectorized
  }

  /** Whether {@code s} is {@code b[start, start + length)} read as ISO-8859-1 (one char a byte). */
  static boolean sameText(String s, byte[] b, int start, int length) {
    if (s.length() != length) {
      return false;
    }
    for (int i = 0; i < length; i++) {
      if (s.charAt(i) != (b[start + i] & 0xFF)) {
        return false;
      }
    }
    return true;
  }

  /** The index of the first ':' in {@code b[from, to)}, or -1; eight bytes at a time. */
  static int indexOfColon(byte[] b, int from, int to) {
    int i = from;
    for (; i + 8 <= to; i += 8) {
      long x = (long) LONGS.get(b, i) ^ 0x3A3A3A3A3A3A3A3AL; // ':' bytes become zero
      long zero = (x - ONES) & ~x & HIGHS; // the lowest flagged byte is exact
      if (zero != 0) {
        return i + (Long.numberOfTrailingZeros(zero) >>> 3);
      }
    }
    for (; i < to; i++) {
      if (b[i] == ':') {
        return i;
      }
    }
    return -1;
  }

  /**
   * The index of the first control byte (below 0x20, HTAB included, or DEL) in {@code b[from, to)},
   * or {@code to}; eight bytes at a time.
   */
  static int indexOfControl(byte[] b, int from, int to) {
    int i = from;
    for (; i + 8 <= to; i += 8) {
      long x = (long) LONGS.get(b, i);
      long del = x ^ 0x7F7F7F7F7F7F7F7FL;
      long flagged = (((x - 0x2020202020202020L) & ~x) | ((del - ONES) & ~del)) & HIGHS;
      if (flagged != 0) {
        return i + (Long.numberOfTrailingZeros(flagged) >>> 3);
      }
    }
    for (; i < to; i++) {
      if ((b[i] >= 0 && b[i] < 0x20) || b[i] == 0x7F) {
        return i;
      }
    }
    return to;
  }

  static int indexOf(byte[] b, int from, int to, byte wanted) {
    for (int i = from; i < to; i++) {
      if (b[i] == wanted) {
        return i;
      }
    }
    return -1;
  }

  static boolean isDigit(byte b) {
    return b >= '0' && b <= '9';
  }

  static boolean isOws(byte b) {
    return b == ' ' || b == '\t';
  }

  static boolean isControl(byte b) {
    return (b >= 0 && b < 0x20 && b != '\t') || b == 0x7F;
  }

  static String text(byte[] b, int from, int to) {
    int end = Math.min(to, from + 80);
    StringBuilder s = new StringBuilder(end - from);
    for (int i = from; i < end; i++) {
      char c = (char) (b[i] & 0xFF);
      s.append(c < 0x20 || c >= 0x7F ? '?' : c);
    }
    return s.toString();
  }

  private ByteScan() {}
}
