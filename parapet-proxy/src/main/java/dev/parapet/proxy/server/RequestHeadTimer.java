package dev.parapet.proxy.server;

import dev.parapet.proxy.metrics.ProxyMetrics;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Slow clients cannot hold a connection hostage (slowloris): once the first byte of a request
 * arrives, its whole head must arrive within {@code headerTimeout}, else the client gets 408 and
 * the connection closes. Between requests a keep-alive connection may stay silent for {@code
 * idleTimeout}, then it is closed quietly. Sits before the HTTP codec, so it sees raw bytes.
 */
final class RequestHeadTimer extends ChannelDuplexHandler {
  private enum Phase {
    IDLE,
    HEAD,
    BUSY
  }

  private final long headerTimeoutNanos;
  private final long idleTimeoutNanos;
  private final LocalResponses responses;
  private final ProxyMetrics metrics;
  private Phase phase = Phase.IDLE;
  private @Nullable ScheduledFuture<?> timer;
  private @Nullable ChannelHandlerContext ctx;

  RequestHeadTimer(
      long headerTimeoutNanos,
      long idleTimeoutNanos,
      LocalResponses responses,
      ProxyMetrics metrics) {
    this.headerTimeoutNanos = headerTimeoutNanos;
    this.idleTimeoutNanos = idleTimeoutNanos;
    this.responses = responses;
    this.metrics = metrics;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    awaitNext();
    super.channelActive(ctx);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    cancel();
    super.channelInactive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (phase == Phase.IDLE && msg instanceof ByteBuf b && b.isReadable()) {
      phase = Phase.HEAD;
      schedule(headerTimeoutNanos);
    }
    super.channelRead(ctx, msg);
  }

  /** The request head is complete: no timer while the request is handled. */
  void headReceived() {
    phase = Phase.BUSY;
    cancel();
  }

  /** The response is done: wait for the next request. */
  void awaitNext() {
    phase = Phase.IDLE;
    schedule(idleTimeoutNanos);
  }

  private void schedule(long nanos) {
    cancel();
    ChannelHandlerContext c = ctx;
    if (c != null) {
      timer = c.executor().schedule(this::expired, nanos, TimeUnit.NANOSECONDS);
    }
  }

  private void cancel() {
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
      timer = null;
    }
  }

  private void expired() {
    ChannelHandlerContext c = ctx;
    timer = null;
    if (c == null || !c.channel().isActive()) {
      return;
    }
    if (phase == Phase.HEAD) {
      metrics.localRejection(ProxyError.HEADER_TIMEOUT.ordinal());
      FullHttpResponse r =
          responses.build(
              c.alloc(),
              ProxyError.HEADER_TIMEOUT,
              "request head not received within the header timeout",
              null,
              -1,
              true);
      c.channel().writeAndFlush(r).addListener(f -> c.channel().close());
    } else if (phase == Phase.IDLE) {
      c.channel().close();
    }
  }
}
