package dev.parapet.proxy.server;

import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.flow.Client;
import dev.parapet.proxy.flow.ProxyContext;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Connection.Listener;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateEvent;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One HTTP/2 client connection, above Netty's frame codec and stream multiplexer: what belongs to
 * the connection rather than to a stream. Each stream's request runs in its own child channel
 * ({@link Http2StreamDownstream}); this counts them, and ends the connection with GOAWAY when it
 * must:
 *
 * <ul>
 *   <li><b>drain and overload</b>: GOAWAY NO_ERROR with the last stream id the proxy took, through
 *       the codec's graceful close: streams already open finish, the client retries later ones
 *       elsewhere (RFC 9113 §6.8). Overload is checked when a stream completes, as an HTTP/1.1
 *       response gets {@code Connection: close}, and by a periodic sweep ({@link
 *       Http2Connections#goAwayAll});
 *   <li><b>rapid reset</b> (CVE-2023-44487): besides the codec's limit on RST_STREAM frames per
 *       window, streams the client resets before their response is complete are counted here in a
 *       window of the same length; past the limit the connection gets GOAWAY ENHANCE_YOUR_CALM and
 *       is closed. A reset stream's request is cancelled like a closed HTTP/1.1 connection's;
 *   <li><b>idle</b>: no stream open for the listener's idle timeout: GOAWAY and close;
 *   <li><b>header timeout</b>: a header block still incomplete after the listener's header timeout
 *       ({@link Http2HeadTimer}): GOAWAY and close.
 * </ul>
 *
 * The codec's own connection errors (floods of PING, SETTINGS, empty DATA or CONTINUATION frames,
 * malformed frames) send their GOAWAY and close without this class; every GOAWAY this connection
 * sends is counted in {@code parapet_h2_goaway_total{reason}} by {@link #listener()}.
 */
final class Http2Connection extends ChannelInboundHandlerAdapter {
  private final Http2Connections owner;
  private final Ticker ticker;
  private @Nullable ChannelHandlerContext ctx;
  private @Nullable Client client;
  private int activeStreams;

  /** Why this connection sends a GOAWAY NO_ERROR (set before the graceful close), or null. */
  private @Nullable String closing;

  private long resetWindowStart;
  private int resetsInWindow;

  Http2Connection(Http2Connections owner, Ticker ticker) {
    this.owner = owner;
    this.ticker = ticker;
    this.resetWindowStart = ticker.read();
  }

  /** The child channels' initializer: one {@link Http2StreamDownstream} per stream. */
  ChannelInitializer<Http2StreamChannel> streams() {
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(Http2StreamChannel ch) {
        ch.pipeline().addLast("stream", new Http2StreamDownstream(Http2Connection.this));
      }
    };
  }

  /** Counts the GOAWAY frames the codec sends for this connection, by reason. */
  Listener listener() {
    return new Http2ConnectionAdapter() {
      @Override
      public void onGoAwaySent(int lastStreamId, long errorCode, ByteBuf debugData) {
        if (ctx == null || !channel().isActive() || tlsClosed()) {
          // The peer is gone: a GOAWAY on the way out of a closed connection reaches nobody (over
          // TLS the client's close_notify closes the engine first, and the GOAWAY's write fails
          // with an internal error that is nobody's).
          return;
        }
        owner.goAwaySent(reason(errorCode));
      }
    };
  }

  /** Over TLS: the engine has sent its close_notify, so nothing more reaches the client. */
  private boolean tlsClosed() {
    SslHandler tls = Objects.requireNonNull(ctx, "ctx").pipeline().get(SslHandler.class);
    return tls != null && tls.engine().isOutboundDone();
  }

  /** The label of a GOAWAY with {@code errorCode}. */
  private String reason(long errorCode) {
    if (errorCode == Http2Error.NO_ERROR.code()) {
      return closing == null ? "closed" : closing;
    }
    if (errorCode == Http2Error.ENHANCE_YOUR_CALM.code()) {
      return "flood";
    }
    // What a client did wrong; anything else (INTERNAL_ERROR, CANCEL) is the proxy's own end.
    return errorCode == Http2Error.PROTOCOL_ERROR.code()
            || errorCode == Http2Error.FRAME_SIZE_ERROR.code()
            || errorCode == Http2Error.COMPRESSION_ERROR.code()
            || errorCode == Http2Error.FLOW_CONTROL_ERROR.code()
            || errorCode == Http2Error.STREAM_CLOSED.code()
        ? "protocol_error"
        : "internal_error";
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    owner.opened(this);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    owner.closed(this);
    super.channelInactive(ctx);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    owner.closed(this);
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent && activeStreams == 0) {
      goAway("idle");
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // The codec reports its connection errors here after it has sent GOAWAY and closes on its own;
    // anything else (an I/O error) ends the connection.
    if (!(cause instanceof Http2Exception)) {
      ctx.close();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // From the streams (on this connection's event loop)

  ProxyContext context() {
    return owner.context();
  }

  Client client() {
    Client c = client;
    if (c == null) {
      c = Client.of(channel());
      client = c;
    }
    return c;
  }

  void streamStarted() {
    activeStreams++;
  }

  /** A stream's response is complete (or the stream ended without one). */
  void streamDone() {
    activeStreams--;
    if (closing != null) {
      return;
    }
    if (owner.draining()) {
      goAway("drain");
    } else if (context().admission().overloadLevel().stopsAccepting()) {
      goAway("overload");
    }
  }

  /**
   * The client reset a stream; {@code beforeResponse}: while its request was still being answered.
   * Only those cost the proxy work (a flow, an origin attempt), so only those count towards the
   * limit.
   */
  void clientReset(boolean beforeResponse) {
    owner.streamReset();
    if (!beforeResponse) {
      return;
    }
    long now = ticker.read();
    if (now - resetWindowStart >= owner.config().resetWindow().toNanos()) {
      resetWindowStart = now;
      resetsInWindow = 0;
    }
    if (++resetsInWindow > owner.config().maxResets() && closing == null) {
      closing = "flood";
      Channel ch = channel();
      ch.writeAndFlush(new DefaultHttp2GoAwayFrame(Http2Error.ENHANCE_YOUR_CALM))
          .addListener(ChannelFutureListener.CLOSE);
    }
  }

  /**
   * A header block stayed incomplete past the header timeout ({@link Http2HeadTimer}): the
   * connection can carry nothing else, so it ends with GOAWAY NO_ERROR, after the streams already
   * open (whose responses can still go out).
   */
  void headerTimeout() {
    owner.headerTimedOut();
    goAway("header_timeout");
  }

  /** A stream whose header block was not a valid request (reset with PROTOCOL_ERROR). */
  void malformedStream() {
    owner.malformed();
  }

  /**
   * Ends the connection gracefully: GOAWAY NO_ERROR with the last stream id taken, the open streams
   * finish, then it closes. Any thread.
   */
  void goAway(String reason) {
    Channel ch = channel();
    if (!ch.eventLoop().inEventLoop()) {
      ch.eventLoop().execute(() -> goAway(reason));
      return;
    }
    if (closing != null || !ch.isActive()) {
      return;
    }
    closing = reason;
    ch.close(); // the codec's close: GOAWAY, then waits for the open streams
  }

  private Channel channel() {
    return Objects.requireNonNull(ctx, "ctx").channel();
  }
}
