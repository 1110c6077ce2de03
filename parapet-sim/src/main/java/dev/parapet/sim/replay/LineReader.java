package dev.parapet.sim.replay;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Lines of an input stream as slices of one reused byte buffer: {@link #next()} moves to the next
 * line, whose bytes are {@code buf()[start() .. end())} without the line break (a trailing CR is
 * dropped too). Nothing is allocated per line; the buffer grows only for a line longer than it, up
 * to {@link #MAX_LINE} bytes.
 */
final class LineReader implements Closeable {
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  static final int MAX_LINE = 1 << 20;

  private final InputStream in;
  private byte[] buf;
  private int pos;
  private int scan;
  private int limit;
  private boolean eof;
  private int start;
  private int end;
  private long lineNo;
  private long bytes;

  LineReader(InputStream in, int bufferSize) {
    this.in = in;
    this.buf = new byte[bufferSize];
  }

  LineReader(InputStream in) {
    this(in, 1 << 16);
  }

  /** Moves to the next line; false at the end of the input. */
  boolean next() throws IOException {
    for (; ; ) {
      int nl = newline(buf, scan, limit);
      if (nl >= 0) {
        take(nl, nl + 1);
        return true;
      }
      scan = limit;
      if (eof) {
        if (pos < limit) {
          take(limit, limit);
          return true;
        }
        return false;
      }
      fill();
    }
  }

  /**
   * The first newline in {@code b[from, to)}, or -1: eight bytes at a time (the "has zero byte"
   * trick on the bytes xor '\n'; its lowest set bit is exact), then byte by byte at the end.
   */
  static int newline(byte[] b, int from, int to) {
    int i = from;
    for (; i + 8 <= to; i += 8) {
      long x = (long) LONGS.get(b, i) ^ 0x0A0A0A0A0A0A0A0AL;
      long t = (x - 0x0101010101010101L) & ~x & 0x8080808080808080L;
      if (t != 0) {
        return i + (Long.numberOfTrailingZeros(t) >>> 3);
      }
    }
    for (; i < to; i++) {
      if (b[i] == '\n') {
        return i;
      }
    }
    return -1;
  }

  private void take(int lineEnd, int nextPos) {
    start = pos;
    end = lineEnd > pos && buf[lineEnd - 1] == '\r' ? lineEnd - 1 : lineEnd;
    pos = nextPos;
    scan = nextPos;
    lineNo++;
  }

  private void fill() throws IOException {
    if (pos > 0) {
      System.arraycopy(buf, pos, buf, 0, limit - pos);
      limit -= pos;
      scan -= pos;
      pos = 0;
    }
    if (limit == buf.length) {
      if (buf.length >= MAX_LINE) {
        throw new IOException(
            "line " + (lineNo + 1) + " : longer than " + MAX_LINE + " bytes (expected: lines)");
      }
      buf = Arrays.copyOf(buf, Math.min(MAX_LINE, buf.length * 2));
    }
    int n = in.read(buf, limit, buf.length - limit);
    if (n < 0) {
      eof = true;
    } else {
      limit += n;
      bytes += n;
    }
  }

  byte[] buf() {
    return buf;
  }

  int start() {
    return start;
  }

  int end() {
    return end;
  }

  /** 1-based number of the current line. */
  long lineNo() {
    return lineNo;
  }

  /** Bytes read from the (decompressed) stream so far. */
  long bytes() {
    return bytes;
  }

  /** The buffer's capacity: bounded by the longest line, never by the input's length. */
  int capacity() {
    return buf.length;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
