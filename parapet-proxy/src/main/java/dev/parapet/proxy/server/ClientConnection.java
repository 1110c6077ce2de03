package dev.parapet.proxy.server;

import dev.parapet.proxy.flow.Client;
import dev.parapet.proxy.flow.ProxyContext;
import dev.parapet.proxy.flow.RequestFlow;
import dev.parapet.proxy.http.Downstream;
import dev.parapet.proxy.http.ForwardedHeaders;
import dev.parapet.proxy.http.ProxyError;
import dev.parapet.proxy.http.RequestBodies;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One HTTP/1.1 client connection: it hands each decoded request to a {@link RequestFlow} and is the
 * {@link Downstream} that request answers into, one request at a time. What is HTTP/1.1 about a
 * response is decided here: framing, {@code Connection: close}, and whether the connection goes on
 * to the next request or closes. Requests that arrive while one is handled (pipelined) wait in
 * order; reads pause when too many pile up.
 *
 * <pre>
 *  IDLE ─head─► RESPONDING ─response complete─► next request (the request was read to its end)
 *                   │                        ─► SKIPPING: its empty last content is still to come
 *                   │                        ─► CLOSING: not keep-alive, a 400, overload, or a body
 *                   │                                    still arriving (it cannot be skipped safely)
 *                   └─reset─► CLOSING (a truncated body: closing is its only honest end)
 * </pre>
 */
final class ClientConnection extends ChannelInboundHandlerAdapter implements Downstream {
  /** Decoded pipelined messages held before reads pause. */
  private static final int MAX_QUEUED_MESSAGES = 64;

  /** Where the connection is. */
  private enum Phase {
    /** Waiting for the next request head. */
    IDLE,
    /** A request is in its flow and its response is not complete. */
    RESPONDING,
    /** The response is complete; the rest of the request (its empty last content) is dropped. */
    SKIPPING,
    /** The connection closes once what is written is out. */
    CLOSING
  }

  private final Supplier<ProxyContext> contexts;
  private final RequestHeadTimer headTimer;
  private final ArrayDeque<Object> queued = new ArrayDeque<>();
  private @Nullable ChannelHandlerContext ctx;
  private @Nullable Client client;
  private Phase phase = Phase.IDLE;

  /**
   * The queue is being worked through (a request answered at once must not start a second walk).
   */
  private boolean dispatching;

  // The current request, from its head to its response's end.
  private @Nullable RequestFlow flow;
  private @Nullable ProxyContext px;
  private @Nullable HttpMethod method;
  private boolean keepAlive;
  private boolean hasBody;
  private boolean lastRead;
  private boolean closeAfterResponse;

  /** An interim response may still go out: HTTP/1.1 client, final response not started. */
  private boolean interimOpen;

  /** The connection answered this request's {@code Expect: 100-continue} itself. */
  private boolean continueSent;

  /**
   * Requests whose {@code 100 Continue} the connection sent as their heads arrived, oldest first:
   * they reach {@link #onRequest} in the same order, maybe later (pipelined).
   */
  private final ArrayDeque<HttpRequest> continued = new ArrayDeque<>(2);

  /** The listener is draining: every response closes its connection. */
  private final BooleanSupplier draining;

  ClientConnection(
      Supplier<ProxyContext> contexts, RequestHeadTimer headTimer, BooleanSupplier draining) {
    this.contexts = contexts;
    this.headTimer = headTimer;
    this.draining = draining;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  /**
   * The listener is draining: a connection between requests (no request in progress, none queued,
   * no byte of a next one read) closes now. On the connection's event loop.
   */
  void closeIfIdle() {
    ChannelHandlerContext c = ctx;
    if (c != null && phase == Phase.IDLE && queued.isEmpty() && headTimer.idle()) {
      phase = Phase.CLOSING;
      c.close();
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (phase == Phase.CLOSING) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (msg instanceof HttpRequest req && HttpUtil.is100ContinueExpected(req)) {
      continueNow(ctx, req);
    }
    if (!queued.isEmpty() || (msg instanceof HttpRequest && phase != Phase.IDLE)) {
      queued.add(msg); // pipelined: handled when the current response is done
      if (queued.size() > MAX_QUEUED_MESSAGES) {
        readClient(false); // resumed by nextRequest
      }
      return;
    }
    dispatch(msg);
  }

  /**
   * {@code Expect: 100-continue}: a {@code 100 Continue} as soon as the head is read and {@code
   * Expect} removed before the request goes on, as Netty's {@code HttpServerExpectContinueHandler}
   * does (here rather than in a handler of its own, which every message would pass through). The
   * request is remembered: the origin's own {@code 100}, an interim response the connection
   * otherwise forwards, would be the client's second.
   */
  private void continueNow(ChannelHandlerContext ctx, HttpRequest req) {
    FullHttpResponse accept =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE, Unpooled.EMPTY_BUFFER);
    accept.headers().set(HttpHeaderNames.CONTENT_LENGTH, 0);
    ctx.writeAndFlush(accept).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    req.headers().remove(HttpHeaderNames.EXPECT);
    continued.add(req);
  }

  private void dispatch(Object msg) {
    if (msg instanceof HttpRequest req) {
      onRequest(req);
      return;
    }
    if (!(msg instanceof HttpContent c)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    boolean last = c instanceof LastHttpContent;
    switch (phase) {
      case RESPONDING -> {
        lastRead |= last;
        RequestFlow f = flow;
        if (f != null) {
          f.onRequestContent(c);
        } else {
          c.release();
        }
      }
      case SKIPPING -> {
        boolean malformed = c.decoderResult().isFailure();
        c.release();
        if (malformed) {
          closeNow(); // the body being skipped lost its framing: nothing after it can be read
        } else if (last) {
          nextRequest();
        }
      }
      case IDLE, CLOSING -> c.release();
    }
  }

  private void onRequest(HttpRequest req) {
    headTimer.headReceived();
    ProxyContext p = contexts.get();
    px = p;
    method = req.method();
    keepAlive = HttpUtil.isKeepAlive(req);
    lastRead = req instanceof LastHttpContent; // a request without a body comes whole
    hasBody = RequestBodies.hasBody(req);
    closeAfterResponse = false;
    continueSent = continued.peekFirst() == req;
    if (continueSent) {
      continued.pollFirst();
    }
    interimOpen = !HttpVersion.HTTP_1_0.equals(req.protocolVersion()); // RFC 9110 §15.2
    phase = Phase.RESPONDING;
    RequestFlow f = RequestFlow.start(p, this, client(), req);
    if (phase == Phase.RESPONDING && flow == null) {
      flow = f; // not when it was answered whole inside start: nothing may reach it any more
    } else {
      f.recycle(null); // answered inside start (a fast failure): its fields back to the decoder
    }
  }

  private Client client() {
    Client c = client;
    if (c == null) {
      c = Client.of(ctx().channel());
      client = c;
    }
    return c;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    RequestFlow f = flow;
    if (phase == Phase.RESPONDING && f != null) {
      flow = null;
      f.onClientGone();
    }
    phase = Phase.CLOSING;
    Object o;
    while ((o = queued.poll()) != null) {
      ReferenceCountUtil.release(o);
    }
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
    ctx.close();
  }

  // ---------------------------------------------------------------------------------------------
  // Downstream: the current request's response

  @Override
  public EventLoop eventLoop() {
    return ctx().channel().eventLoop();
  }

  @Override
  public ByteBufAllocator alloc() {
    return ctx().alloc();
  }

  /**
   * Writes an interim response at once, with this hop's {@code Via}: before the final response
   * only, never to an HTTP/1.0 client, and a {@code 100 Continue} only when the connection did not
   * send one itself for an {@code Expect: 100-continue} (the client would see two).
   */
  @Override
  public void interim(HttpResponse interim) {
    if (phase != Phase.RESPONDING
        || !interimOpen
        || (interim.status().code() == 100 && continueSent)) {
      ReferenceCountUtil.release(interim);
      return;
    }
    HttpHeaders h = interim.headers();
    ForwardedHeaders.appendVia(h, Objects.requireNonNull(px, "px").viaMember());
    ChannelHandlerContext c = ctx();
    c.writeAndFlush(
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            interim.status(),
            Unpooled.EMPTY_BUFFER,
            h,
            EmptyHttpHeaders.INSTANCE),
        c.voidPromise());
  }

  @Override
  public void head(HttpResponse head, @Nullable String proxyStatus) {
    interimOpen = false;
    if (phase != Phase.RESPONDING) {
      ReferenceCountUtil.release(head);
      return;
    }
    HttpResponse out = head.setProtocolVersion(HttpVersion.HTTP_1_1);
    HttpHeaders h = out.headers();
    if (!h.contains(HttpHeaderNames.CONTENT_LENGTH) && mayHaveBody(out.status().code())) {
      h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
    }
    if (proxyStatus != null) {
      // RFC 9209: members are appended, the one closest to the client last.
      String before = h.get("Proxy-Status");
      h.set("Proxy-Status", before == null ? proxyStatus : before + ", " + proxyStatus);
    }
    annotate(h);
    ctx().write(out, ctx().voidPromise()); // encoded now: on the event loop, nothing queues writes
    RequestFlow f = flow;
    if (f != null) {
      f.recycle(h); // back to the origin connection's decoder, for its next response
    }
  }

  @Override
  public void content(HttpContent content) {
    if (phase != Phase.RESPONDING) {
      content.release();
    } else if (content instanceof LastHttpContent) {
      complete(content);
    } else {
      ChannelHandlerContext c = ctx();
      c.writeAndFlush(content, c.voidPromise());
    }
  }

  @Override
  public void answer(FullHttpResponse response) {
    interimOpen = false;
    if (phase != Phase.RESPONDING) {
      response.release();
      return;
    }
    annotate(response.headers());
    complete(response);
  }

  @Override
  public void error(ProxyError error, String detail, FullHttpResponse response) {
    if (error.status().code() == 400 || error.status().code() == 413) {
      // A peer that sent one malformed request may be desynchronized; a refused body may still be
      // arriving, and cannot be skipped safely.
      closeAfterResponse = true;
    }
    answer(response);
  }

  @Override
  public void reset(ProxyError error, String detail) {
    if (phase == Phase.RESPONDING) {
      flow = null;
      closeNow();
    }
  }

  @Override
  public boolean isWritable() {
    return ctx().channel().isWritable();
  }

  @Override
  public void readRequestBody(boolean on) {
    readClient(on);
  }

  /**
   * This hop's fields on a response about to go out: {@code Via}, and {@code Connection: close}
   * when the connection will close after it (not keep-alive, overloaded or draining: go elsewhere).
   */
  private void annotate(HttpHeaders h) {
    ProxyContext p = Objects.requireNonNull(px, "px");
    ForwardedHeaders.appendVia(h, p.viaMember());
    if (!keepAlive
        || closeAfterResponse
        || draining.getAsBoolean()
        || p.admission().overloadLevel().stopsAccepting()) {
      closeAfterResponse = true;
      h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
  }

  /** Writes the response's last message and goes on to the next request, or closes. */
  private void complete(Object last) {
    ChannelHandlerContext c = ctx();
    RequestFlow f = flow;
    flow = null;
    if (f != null) {
      f.recycle(null); // the request's fields, back to this connection's decoder
    }
    if (closeAfterResponse || (hasBody && !lastRead)) {
      phase = Phase.CLOSING;
      c.writeAndFlush(last).addListener(ChannelFutureListener.CLOSE);
      return;
    }
    c.writeAndFlush(last, c.voidPromise());
    if (lastRead) {
      nextRequest();
    } else {
      phase = Phase.SKIPPING; // the request's (empty) last content is still to come
    }
  }

  private void nextRequest() {
    phase = Phase.IDLE;
    headTimer.awaitNext();
    readClient(true);
    if (dispatching) {
      return; // the walk below this call goes on with the next message
    }
    dispatching = true;
    try {
      Object next;
      while ((next = queued.peek()) != null
          && phase != Phase.CLOSING
          && (phase == Phase.IDLE || !(next instanceof HttpRequest))) {
        dispatch(queued.poll());
      }
    } finally {
      dispatching = false;
    }
  }

  private void closeNow() {
    phase = Phase.CLOSING;
    ctx().close();
  }

  private boolean mayHaveBody(int code) {
    return !HttpMethod.HEAD.equals(method) && code != 204 && code != 304;
  }

  /**
   * Reads stay on while a request is handled (toggling them costs two epoll_ctl calls per request);
   * they pause only when something piles up: pipelined requests, a body waiting for its origin
   * connection, or an origin connection that cannot take more.
   */
  private void readClient(boolean on) {
    ChannelHandlerContext c = ctx;
    if (c != null && c.channel().config().isAutoRead() != on) {
      c.channel().config().setAutoRead(on);
    }
  }

  private ChannelHandlerContext ctx() {
    return Objects.requireNonNull(ctx, "ctx");
  }
}
