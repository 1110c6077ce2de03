package dev.parapet.proxy.server;

import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.http.ForwardedHeaders;
import dev.parapet.proxy.http.LocalResponses;
import dev.parapet.proxy.http.ProxyError;
import dev.parapet.proxy.metrics.ProxyMetrics;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.util.AsciiString;
import org.jspecify.annotations.Nullable;

/**
 * Slow clients cannot hold a connection hostage (slowloris): once the first byte of a request
 * arrives, its whole head must arrive within {@code headerTimeout}, else the client gets 408 and
 * the connection closes. Between requests a keep-alive connection may stay silent for {@code
 * idleTimeout}, then it is closed quietly. Sits before the HTTP codec, so it sees raw bytes.
 *
 * <p>Like Netty's {@code IdleStateHandler}, it does not schedule a timer per request (a priority
 * queue insert and removal each time): it notes when each phase began and one check per connection,
 * every quarter of the shorter timeout, compares. A timeout fires up to a quarter late.
 */
final class RequestHeadTimer extends ChannelDuplexHandler {
  private enum Phase {
    IDLE,
    HEAD,
    BUSY
  }

  private final long headerTimeoutNanos;
  private final long idleTimeoutNanos;
  private final PeriodicCheck periodic;
  private final LocalResponses responses;
  private final AsciiString via;
  private final ProxyMetrics metrics;
  private final Ticker ticker;
  private Phase phase = Phase.IDLE;
  private long phaseSince;
  private @Nullable ChannelHandlerContext ctx;

  RequestHeadTimer(
      long headerTimeoutNanos,
      long idleTimeoutNanos,
      LocalResponses responses,
      AsciiString via,
      ProxyMetrics metrics,
      Ticker ticker) {
    this.headerTimeoutNanos = headerTimeoutNanos;
    this.idleTimeoutNanos = idleTimeoutNanos;
    this.periodic = new PeriodicCheck(Math.min(headerTimeoutNanos, idleTimeoutNanos));
    this.responses = responses;
    this.via = via;
    this.metrics = metrics;
    this.ticker = ticker;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    if (ctx.channel().isActive()) {
      start(ctx); // added after the TLS handshake: the connection is active already
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    start(ctx);
    super.channelActive(ctx);
  }

  private void start(ChannelHandlerContext ctx) {
    if (periodic.started()) {
      return;
    }
    awaitNext();
    periodic.start(ctx.executor(), this::check);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    periodic.stop();
    super.channelInactive(ctx);
  }

  /** Removed: the connection turned out to speak HTTP/2, which has no request heads to time. */
  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    periodic.stop();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (phase == Phase.IDLE && msg instanceof ByteBuf b && b.isReadable()) {
      phase = Phase.HEAD;
      phaseSince = ticker.read();
    }
    super.channelRead(ctx, msg);
  }

  /** The request head is complete: no deadline while the request is handled. */
  void headReceived() {
    phase = Phase.BUSY;
  }

  /** No byte of a next request has arrived since the last response ended. */
  boolean idle() {
    return phase == Phase.IDLE;
  }

  /** The response is done: wait for the next request. */
  void awaitNext() {
    phase = Phase.IDLE;
    phaseSince = ticker.read();
  }

  private void check() {
    ChannelHandlerContext c = ctx;
    if (c == null || !c.channel().isActive()) {
      return;
    }
    long waited = ticker.read() - phaseSince;
    if (phase == Phase.HEAD && waited >= headerTimeoutNanos) {
      phase = Phase.BUSY;
      metrics.localRejection(ProxyError.HEADER_TIMEOUT.ordinal());
      FullHttpResponse r =
          responses.build(
              c.alloc(),
              ProxyError.HEADER_TIMEOUT,
              "request head not received within the header timeout",
              null,
              -1);
      ForwardedHeaders.appendVia(r.headers(), via);
      r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      c.channel().writeAndFlush(r).addListener(f -> c.channel().close());
    } else if (phase == Phase.IDLE && waited >= idleTimeoutNanos) {
      c.channel().close();
    }
  }
}
