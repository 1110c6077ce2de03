package dev.parapet.proxy.server;

import dev.parapet.core.time.Ticker;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * HTTP/2's slow-head timer: a header block (HEADERS without END_HEADERS, then CONTINUATION frames
 * up to the one with END_HEADERS) must be complete within the listener's header timeout, as an
 * HTTP/1.1 request head must ({@link RequestHeadTimer}). The frame codec holds an incomplete block
 * without telling anyone, and while it is open the connection can carry no other frame (RFC 9113
 * §6.10), so a client that stops in the middle holds the connection and its decoder state until the
 * idle timeout. Past the header timeout {@link Http2Connection#headerTimeout} ends the connection.
 *
 * <p>Sits between the TLS handler (if any) and the frame codec and reads only the nine-byte frame
 * headers of the bytes going past (after the 24-byte client preface), without consuming or copying
 * anything. Like {@link RequestHeadTimer} it notes when the block opened and checks every quarter
 * of the timeout (at most every second): a timeout fires up to a quarter late.
 */
final class Http2HeadTimer extends ChannelInboundHandlerAdapter {
  private static final int PREFACE_LENGTH = 24;
  private static final int FRAME_HEADER_LENGTH = 9;
  private static final int HEADERS = 0x1;
  private static final int CONTINUATION = 0x9;
  private static final int END_HEADERS = 0x4;

  private final Http2Connection connection;
  private final long timeoutNanos;
  private final PeriodicCheck periodic;
  private final Ticker ticker;

  /** Bytes to let past before the next frame header: the preface, then each frame's payload. */
  private int skip = PREFACE_LENGTH;

  private final byte[] header = new byte[FRAME_HEADER_LENGTH];
  private int headerFill;

  /** A header block is open (its first frame read, its END_HEADERS not yet), since when. */
  private boolean blockOpen;

  private long blockSince;

  Http2HeadTimer(Http2Connection connection, long timeoutNanos, Ticker ticker) {
    this.connection = connection;
    this.timeoutNanos = timeoutNanos;
    this.periodic = new PeriodicCheck(timeoutNanos);
    this.ticker = ticker;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    periodic.start(ctx.executor(), this::check);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    periodic.stop();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    periodic.stop();
    super.channelInactive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (msg instanceof ByteBuf b) {
      scan(b);
    }
    super.channelRead(ctx, msg);
  }

  /** Follows the frame boundaries through {@code b}'s readable bytes, leaving them as they are. */
  private void scan(ByteBuf b) {
    int i = b.readerIndex();
    int end = b.writerIndex();
    while (i < end) {
      if (skip > 0) {
        int n = Math.min(skip, end - i);
        skip -= n;
        i += n;
        continue;
      }
      header[headerFill++] = b.getByte(i++);
      if (headerFill == FRAME_HEADER_LENGTH) {
        headerFill = 0;
        int length = (header[0] & 0xff) << 16 | (header[1] & 0xff) << 8 | header[2] & 0xff;
        frame(header[3] & 0xff, header[4] & 0xff);
        skip = length;
      }
    }
  }

  private void frame(int type, int flags) {
    if (type != HEADERS && type != CONTINUATION) {
      return;
    }
    if ((flags & END_HEADERS) != 0) {
      blockOpen = false;
    } else if (!blockOpen) {
      blockOpen = true;
      blockSince = ticker.read();
    }
  }

  private void check() {
    if (blockOpen && ticker.read() - blockSince >= timeoutNanos) {
      blockOpen = false;
      periodic.stop();
      connection.headerTimeout();
    }
  }
}
