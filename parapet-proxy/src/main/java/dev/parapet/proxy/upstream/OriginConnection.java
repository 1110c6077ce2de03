package dev.parapet.proxy.upstream;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpObject;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

/**
 * The last handler of an origin connection: hands what the origin sends to the exchange that
 * currently uses the connection. An idle connection that receives anything (or fails) is closed: a
 * keep-alive connection must be silent between exchanges.
 */
public final class OriginConnection extends ChannelInboundHandlerAdapter {

  /** The exchange using the connection; called on the connection's event loop. */
  public interface Listener {
    /** A response head, content or last content; the listener owns (and releases) it. */
    void onOriginMessage(HttpObject msg);

    /** The connection closed. */
    void onOriginClosed();

    /** The connection failed. */
    void onOriginException(Throwable cause);

    /** The connection's writability changed (flow control of the request body). */
    void onOriginWritabilityChanged(boolean writable);
  }

  private @Nullable Listener listener;

  /** The handler of an origin channel made by {@link HostPool}. */
  public static OriginConnection of(Channel ch) {
    // Runs twice per request: the pipeline's last handler (one field read) is this handler as
    // HostPool builds it; the attribute (a search of the channel's attributes) is the fallback.
    if (ch.pipeline().last() instanceof OriginConnection last) {
      return last;
    }
    OriginConnection c = ch.attr(KEY).get();
    if (c == null) {
      throw new IllegalStateException("channel : " + ch + " (expected: an origin connection)");
    }
    return c;
  }

  private static final io.netty.util.AttributeKey<OriginConnection> KEY =
      io.netty.util.AttributeKey.valueOf(OriginConnection.class, "origin-connection");

  /** Makes this handler findable by {@link #of} on {@code ch} (call when adding it). */
  public OriginConnection bind(Channel ch) {
    ch.attr(KEY).set(this);
    return this;
  }

  /** Routes the connection's events to {@code l} until {@link #detach}. */
  public void attach(Listener l) {
    this.listener = l;
  }

  /** Stops routing events (the exchange is over). */
  public void detach() {
    this.listener = null;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    Listener l = listener;
    if (l != null && msg instanceof HttpObject http) {
      l.onOriginMessage(http);
    } else {
      ReferenceCountUtil.release(msg);
      ctx.close();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    Listener l = listener;
    if (l != null) {
      l.onOriginClosed();
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    Listener l = listener;
    ctx.close();
    if (l != null) {
      l.onOriginException(cause);
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    Listener l = listener;
    if (l != null) {
      l.onOriginWritabilityChanged(ctx.channel().isWritable());
    }
  }
}
