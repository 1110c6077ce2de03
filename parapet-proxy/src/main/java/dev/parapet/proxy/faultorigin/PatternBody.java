package dev.parapet.proxy.faultorigin;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.stream.ChunkedInput;
import java.nio.charset.StandardCharsets;

/**
 * A response body of {@code length} bytes that repeats one 64-byte line, produced in chunks of at
 * most 16 KiB as the connection can take them ({@link io.netty.handler.stream.ChunkedWriteHandler}
 * pulls the next chunk only when the socket is writable), so a 1 GiB body needs no 1 GiB buffer.
 * The same length always gives the same bytes: tests and caches can compare bodies.
 */
final class PatternBody implements ChunkedInput<ByteBuf> {
  /** 63 printable bytes and a newline. */
  static final byte[] LINE =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.\n"
          .getBytes(StandardCharsets.US_ASCII);

  private static final int CHUNK = 16 * 1024;

  private final long length;
  private long offset;

  PatternBody(long length) {
    this.length = length;
  }

  /** The byte at {@code index} of every pattern body. */
  static byte byteAt(long index) {
    return LINE[(int) (index % LINE.length)];
  }

  @Override
  public boolean isEndOfInput() {
    return offset >= length;
  }

  @Override
  public void close() {}

  @Deprecated
  @Override
  public ByteBuf readChunk(ChannelHandlerContext ctx) {
    return readChunk(ctx.alloc());
  }

  @Override
  public ByteBuf readChunk(ByteBufAllocator allocator) {
    int size = (int) Math.min(CHUNK, length - offset);
    ByteBuf chunk = allocator.buffer(size);
    try {
      int start = (int) (offset % LINE.length);
      int written = 0;
      while (written < size) {
        int n = Math.min(LINE.length - start, size - written);
        chunk.writeBytes(LINE, start, n);
        written += n;
        start = 0;
      }
      offset += size;
      return chunk;
    } catch (RuntimeException e) {
      chunk.release();
      throw e;
    }
  }

  @Override
  public long length() {
    return length;
  }

  @Override
  public long progress() {
    return offset;
  }
}
