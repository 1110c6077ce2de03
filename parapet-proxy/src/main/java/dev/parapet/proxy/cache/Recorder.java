package dev.parapet.proxy.cache;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.Arrays;

/**
 * Copies a response body as it streams to the client (the client's write releases the buffers),
 * bounded by the largest object the store keeps; {@link #finish} makes the stored entry.
 */
final class Recorder {
  private final int status;
  private final HttpHeaders headers;
  private final long responseNanos;
  private final long responseWall;
  private final long max;
  private byte[] buf;
  private int size;

  /**
   * @param headers the response's fields as received (a copy: the live ones get this hop's)
   * @param declared the declared Content-Length, or -1
   */
  Recorder(
      int status,
      HttpHeaders headers,
      long responseNanos,
      long responseWall,
      long max,
      long declared) {
    this.status = status;
    this.headers = headers;
    this.responseNanos = responseNanos;
    this.responseWall = responseWall;
    this.max = max;
    this.buf = new byte[(int) Math.min(max, declared >= 0 ? declared : 8192)];
  }

  /** Adds a piece; false when the body grows beyond the largest object stored. */
  boolean add(ByteBuf b) {
    int n = b.readableBytes();
    if (size + (long) n > max) {
      buf = new byte[0];
      return false;
    }
    if (size + n > buf.length) {
      buf = Arrays.copyOf(buf, (int) Math.min(max, Math.max(size + n, buf.length * 2L)));
    }
    b.getBytes(b.readerIndex(), buf, size, n);
    size += n;
    return true;
  }

  /** The entry to store, for a request with {@code requestHeaders} sent at {@code requestNanos}. */
  CachedResponse finish(HttpHeaders requestHeaders, long requestNanos, Heuristic heuristic) {
    byte[] body = size == buf.length ? buf : Arrays.copyOf(buf, size);
    return CachedResponse.of(
        status,
        headers,
        body,
        requestHeaders,
        requestNanos,
        responseNanos,
        responseWall,
        heuristic);
  }

  /** The declared Content-Length, or -1 (absent or invalid: the body is bounded as it comes). */
  static long declaredLength(HttpHeaders h) {
    String v = h.get(io.netty.handler.codec.http.HttpHeaderNames.CONTENT_LENGTH);
    if (v == null) {
      return -1;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
