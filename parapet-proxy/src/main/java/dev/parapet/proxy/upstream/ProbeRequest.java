package dev.parapet.proxy.upstream;

import dev.parapet.proxy.tls.OriginTls;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One {@code GET path} to one origin host on a fresh connection, outside the pool: what active
 * health checks and a breaker's synthetic half-open probes send. Neither waits behind user requests
 * nor leaves state in the pool ({@code Connection: close}), and the connection is closed with a
 * reset ({@code SO_LINGER 0}) once the answer head is known, as HAProxy closes its checks, so
 * frequent checks leave no TIME_WAIT socket on this side. The answer is the response head's status;
 * the body is never read.
 */
public final class ProbeRequest {
  /** How a probe ended; called once, on the loop it was sent from. */
  @FunctionalInterface
  public interface Callback {
    /**
     * @param status the response's status, or {@link #NO_ANSWER} when the connection failed or
     *     closed first, or {@link #TIMED_OUT} when no head came within the timeout
     */
    void done(int status);
  }

  /** No response head: the connection failed, closed or sent something that is not HTTP. */
  public static final int NO_ANSWER = -1;

  /** No response head within the timeout. */
  public static final int TIMED_OUT = -2;

  private ProbeRequest() {}

  /**
   * Sends the probe from {@code loop}; {@code callback} runs there exactly once.
   *
   * @param timeoutMillis connect and answer within this, at least 1
   */
  public static void send(
      EventLoop loop,
      Class<? extends Channel> channelType,
      InetSocketAddress address,
      @Nullable OriginTls tls,
      String path,
      int timeoutMillis,
      String userAgent,
      Callback callback) {
    Answer a = new Answer(callback);
    ChannelFuture f =
        new Bootstrap()
            .group(loop)
            .channel(channelType)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, timeoutMillis)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.SO_LINGER, 0)
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    if (tls != null) {
                      ch.pipeline()
                          .addLast("tls", tls.newHandler(ch.alloc(), address, timeoutMillis));
                    }
                    ch.pipeline().addLast(new HttpClientCodec()).addLast(a);
                  }
                })
            .connect(address);
    a.channel = f.channel();
    a.timer = loop.schedule(() -> a.done(TIMED_OUT), timeoutMillis, TimeUnit.MILLISECONDS);
    f.addListener(done -> {
      if (!done.isSuccess()) {
        a.done(NO_ANSWER);
        return;
      }
      FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, path);
      req.headers()
          .set(HttpHeaderNames.HOST, address.getHostString() + ":" + address.getPort())
          .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE)
          .set(HttpHeaderNames.USER_AGENT, userAgent)
          .setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
      f.channel().writeAndFlush(req);
    });
  }

  /** The probe's only handler; every method runs on its loop. */
  private static final class Answer extends ChannelInboundHandlerAdapter {
    final Callback callback;
    @Nullable Channel channel;
    @Nullable ScheduledFuture<?> timer;
    boolean finished;

    Answer(Callback callback) {
      this.callback = callback;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (msg instanceof HttpResponse r) {
          done(r.decoderResult().isFailure() ? NO_ANSWER : r.status().code());
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      done(NO_ANSWER); // closed before a response head: a no-op when one came first
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      done(NO_ANSWER);
    }

    void done(int status) {
      if (finished) {
        return;
      }
      finished = true;
      ScheduledFuture<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
      Channel ch = channel;
      if (ch != null) {
        ch.close();
      }
      callback.done(status);
    }
  }
}
