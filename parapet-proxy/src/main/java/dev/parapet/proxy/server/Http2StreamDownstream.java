package dev.parapet.proxy.server;

import dev.parapet.proxy.flow.ProxyContext;
import dev.parapet.proxy.flow.RequestFlow;
import dev.parapet.proxy.http.Downstream;
import dev.parapet.proxy.http.ForwardedHeaders;
import dev.parapet.proxy.http.ProxyError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.util.ReferenceCountUtil;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One HTTP/2 stream: its request goes through a {@link RequestFlow} exactly as an HTTP/1.1 request
 * does, and this is the {@link Downstream} the flow answers into. It lives in the stream's child
 * channel ({@code Http2MultiplexHandler}), on the connection's event loop.
 *
 * <pre>
 *  OPEN ─HEADERS─► RESPONDING ─response complete─► DONE
 *   │                  ├─reset by the flow ─► RST_STREAM INTERNAL_ERROR ─► DONE
 *   │                  └─RST_STREAM from the client, or the connection closed ─► the flow is
 *   │                                         told the client is gone ─► DONE
 *   └─a malformed header block ─► RST_STREAM PROTOCOL_ERROR ─► DONE
 * </pre>
 *
 * <p>What maps to what: the response head is a HEADERS frame, its body DATA frames, a complete
 * answer HEADERS (+ DATA) with END_STREAM; {@link #isWritable} is the stream channel's writability,
 * which follows the client's flow-control window for the stream and the connection; {@link
 * #readRequestBody} is the stream channel's auto-read, so a request body the origin cannot take yet
 * is not consumed and its window is not returned to the client. A response that completes while the
 * request body is still arriving ends the stream with RST_STREAM NO_ERROR (RFC 9113 §8.1), the
 * HTTP/2 counterpart of closing an HTTP/1.1 connection after a 413.
 */
final class Http2StreamDownstream extends ChannelInboundHandlerAdapter implements Downstream {
  /** Where the stream is. */
  private enum Phase {
    OPEN,
    RESPONDING,
    DONE
  }

  private final Http2Connection connection;
  private @Nullable ChannelHandlerContext ctx;
  private Phase phase = Phase.OPEN;

  /** The final response's head went out (or a whole answer): no interim response after it. */
  private boolean finalStarted;

  private @Nullable RequestFlow flow;
  private @Nullable ProxyContext px;
  private @Nullable HttpMethod method;

  /** The request's END_STREAM was read. */
  private boolean lastRead;

  Http2StreamDownstream(Http2Connection connection) {
    this.connection = connection;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    try {
      if (msg instanceof Http2HeadersFrame h) {
        onHeaders(h);
      } else if (msg instanceof Http2DataFrame d) {
        onData(d);
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  private void onHeaders(Http2HeadersFrame frame) {
    if (phase != Phase.OPEN) {
      // Trailers: their fields are not forwarded (the origin's request is HTTP/1.1 and chunked
      // trailers are rarely honoured); the END_STREAM they carry ends the body.
      if (frame.isEndStream()) {
        requestContent(LastHttpContent.EMPTY_LAST_CONTENT);
      }
      return;
    }
    HttpRequest req;
    try {
      req = Http2Requests.toRequest(frame.headers(), frame.isEndStream());
    } catch (Http2Requests.Malformed e) {
      phase = Phase.DONE;
      connection.malformedStream();
      ctx().writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.PROTOCOL_ERROR));
      return;
    }
    ProxyContext p = connection.context();
    px = p;
    method = req.method();
    lastRead = frame.isEndStream();
    phase = Phase.RESPONDING;
    connection.streamStarted();
    RequestFlow f = RequestFlow.start(p, this, connection.client(), req);
    if (phase == Phase.RESPONDING) {
      flow = f;
      if (lastRead) {
        f.onRequestContent(LastHttpContent.EMPTY_LAST_CONTENT);
      }
    }
  }

  private void onData(Http2DataFrame frame) {
    ByteBuf data = frame.content().retain();
    HttpContent c =
        frame.isEndStream() ? new DefaultLastHttpContent(data) : new DefaultHttpContent(data);
    requestContent(c);
  }

  private void requestContent(HttpContent c) {
    if (c instanceof LastHttpContent) {
      lastRead = true;
    }
    RequestFlow f = flow;
    if (phase == Phase.RESPONDING && f != null) {
      f.onRequestContent(c);
    } else {
      ReferenceCountUtil.release(c);
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof Http2ResetFrame) {
      connection.clientReset(phase == Phase.RESPONDING);
    }
    ReferenceCountUtil.release(evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    RequestFlow f = flow;
    flow = null;
    if (phase == Phase.RESPONDING && f != null) {
      f.onClientGone(); // RST_STREAM from the client, or the connection went away
    }
    if (phase == Phase.RESPONDING) {
      connection.streamDone();
    }
    phase = Phase.DONE;
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    RequestFlow f = flow;
    if (phase == Phase.RESPONDING && f != null) {
      f.onWritabilityChanged(ctx.channel().isWritable());
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close(); // resets the stream; the connection and its other streams go on
  }

  // ---------------------------------------------------------------------------------------------
  // Downstream: the stream's response

  @Override
  public EventLoop eventLoop() {
    return channel().eventLoop();
  }

  @Override
  public ByteBufAllocator alloc() {
    return ctx().alloc();
  }

  /**
   * An origin's {@code 103 Early Hints} (or another 1xx but {@code 101}) as a HEADERS frame before
   * the final one, while that one has not started (RFC 9113 §8.1).
   */
  @Override
  public void interim(HttpResponse interim) {
    int code = interim.status().code();
    if (phase != Phase.RESPONDING || finalStarted || code == 101) {
      ReferenceCountUtil.release(interim);
      return;
    }
    annotate(interim.headers());
    ctx()
        .writeAndFlush(
            new DefaultHttp2HeadersFrame(Http2Requests.toHeaders(interim), false),
            ctx().voidPromise());
  }

  @Override
  public void head(HttpResponse head, @Nullable String proxyStatus) {
    finalStarted = true;
    if (phase != Phase.RESPONDING) {
      ReferenceCountUtil.release(head);
      return;
    }
    HttpHeaders h = head.headers();
    if (proxyStatus != null) {
      // RFC 9209: members are appended, the one closest to the client last.
      String before = h.get("Proxy-Status");
      h.set("Proxy-Status", before == null ? proxyStatus : before + ", " + proxyStatus);
    }
    annotate(h);
    Http2Headers out = Http2Requests.toHeaders(head);
    ctx().write(new DefaultHttp2HeadersFrame(out, false), ctx().voidPromise());
  }

  @Override
  public void content(HttpContent content) {
    if (phase != Phase.RESPONDING) {
      content.release();
      return;
    }
    // A last content's trailers are dropped: the origin's chunked trailers rarely matter and
    // would need a second HEADERS frame.
    boolean last = content instanceof LastHttpContent;
    ChannelHandlerContext c = ctx();
    c.writeAndFlush(new DefaultHttp2DataFrame(content.content(), last), c.voidPromise());
    if (last) {
      complete();
    }
  }

  @Override
  public void answer(FullHttpResponse response) {
    if (phase != Phase.RESPONDING) {
      response.release();
      return;
    }
    annotate(response.headers());
    ChannelHandlerContext c = ctx();
    ByteBuf body = response.content();
    boolean empty = !body.isReadable() || !mayHaveBody();
    c.write(
        new DefaultHttp2HeadersFrame(Http2Requests.toHeaders(response), empty), c.voidPromise());
    if (empty) {
      response.release();
      c.flush();
    } else {
      c.writeAndFlush(new DefaultHttp2DataFrame(body, true), c.voidPromise());
    }
    complete();
  }

  @Override
  public void error(ProxyError error, String detail, FullHttpResponse response) {
    answer(response);
  }

  @Override
  public void reset(ProxyError error, String detail) {
    if (phase == Phase.RESPONDING) {
      flow = null;
      phase = Phase.DONE;
      ctx().writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.INTERNAL_ERROR));
      connection.streamDone();
    }
  }

  @Override
  public boolean isWritable() {
    return channel().isWritable();
  }

  @Override
  public void readRequestBody(boolean on) {
    Channel ch = channel();
    if (ch.config().isAutoRead() != on) {
      ch.config().setAutoRead(on);
    }
  }

  /** {@code Via} for this hop, received over HTTP/2. HTTP/2 has no {@code Connection} field. */
  private void annotate(HttpHeaders h) {
    ProxyContext p = Objects.requireNonNull(px, "px");
    ForwardedHeaders.appendVia(h, p.viaMember(Http2Requests.HTTP_2));
  }

  /** The response's END_STREAM is written. */
  private void complete() {
    flow = null;
    phase = Phase.DONE;
    if (!lastRead) {
      // The body is still arriving and nobody will read it (RFC 9113 §8.1).
      ctx().writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.NO_ERROR));
    }
    connection.streamDone();
  }

  private boolean mayHaveBody() {
    return !HttpMethod.HEAD.equals(method);
  }

  private Channel channel() {
    return ctx().channel();
  }

  private ChannelHandlerContext ctx() {
    return Objects.requireNonNull(ctx, "ctx");
  }
}
