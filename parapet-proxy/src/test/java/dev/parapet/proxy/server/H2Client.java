package dev.parapet.proxy.server;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Netty's HTTP/2 client over h2c with prior knowledge, for tests: streams as futures of their
 * response, the GOAWAY frames the server sent, and a way to write any frame on the connection
 * (floods, malformed input).
 */
final class H2Client implements AutoCloseable {
  /** A stream's response: status, fields, body, or the reset that ended it. */
  record Response(int status, Http2Headers headers, String body, long resetCode) {}

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  final Channel channel;
  final List<Http2GoAwayFrame> goAways = new CopyOnWriteArrayList<>();
  final CompletableFuture<Void> closed = new CompletableFuture<>();

  /** The ids of the streams {@link #request} opened, in order. */
  final List<Integer> streamIds = new CopyOnWriteArrayList<>();

  H2Client(int port) throws InterruptedException {
    this(port, Http2Settings.defaultSettings());
  }

  H2Client(int port, Http2Settings settings) throws InterruptedException {
    channel =
        new Bootstrap()
            .group(group)
            .channel(NioSocketChannel.class)
            // A small receive window: a client that stops reading fills the server's socket
            // buffers after little data (the flood tests), as a slow client on the internet does.
            .option(io.netty.channel.ChannelOption.SO_RCVBUF, 4096)
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    ch.pipeline()
                        .addLast(
                            Http2FrameCodecBuilder.forClient()
                                .initialSettings(settings)
                                .validateHeaders(false) // to send what a server must refuse
                                .encoderEnforceMaxRstFramesPerWindow(0, 0)
                                .encoderEnforceMaxQueuedControlFrames(0)
                                .encoderIgnoreMaxHeaderListSize(true)
                                .build(),
                            new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()),
                            new ChannelInboundHandlerAdapter() {
                              @Override
                              public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                if (msg instanceof Http2GoAwayFrame g) {
                                  goAways.add(g.retain());
                                }
                                ReferenceCountUtil.release(msg);
                              }

                              @Override
                              public void channelInactive(ChannelHandlerContext ctx) {
                                closed.complete(null);
                              }

                              @Override
                              public void exceptionCaught(ChannelHandlerContext ctx, Throwable c) {
                                ctx.close();
                              }
                            });
                  }
                })
            .connect("127.0.0.1", port)
            .sync()
            .channel();
  }

  static Http2Headers get(int port, String path) {
    return new DefaultHttp2Headers()
        .method("GET")
        .scheme("http")
        .authority("127.0.0.1:" + port)
        .path(path);
  }

  /** Opens a stream with {@code headers} (and {@code body}, when not null) and its response. */
  CompletableFuture<Response> request(Http2Headers headers, String body)
      throws InterruptedException, java.util.concurrent.ExecutionException {
    CompletableFuture<Response> done = new CompletableFuture<>();
    Http2StreamChannel stream = open(done);
    stream.write(new DefaultHttp2HeadersFrame(headers, body == null));
    if (body != null) {
      stream.write(
          new DefaultHttp2DataFrame(Unpooled.copiedBuffer(body, StandardCharsets.UTF_8), true));
    }
    stream.flush();
    // The id is given when the headers are written, on the event loop: ask it after them.
    streamIds.add(stream.eventLoop().submit(() -> stream.stream().id()).get());
    return done;
  }

  /** A new stream whose response completes {@code done}. */
  Http2StreamChannel open(CompletableFuture<Response> done) throws InterruptedException {
    return new Http2StreamChannelBootstrap(channel)
        .handler(
            new ChannelInboundHandlerAdapter() {
              private Http2Headers head = new DefaultHttp2Headers();
              private final StringBuilder body = new StringBuilder();

              @Override
              public void channelRead(ChannelHandlerContext ctx, Object msg) {
                try {
                  if (msg instanceof Http2HeadersFrame h) {
                    if (head.status() == null) {
                      head = h.headers();
                    }
                    if (h.isEndStream()) {
                      finish();
                    }
                  } else if (msg instanceof Http2DataFrame d) {
                    ByteBuf b = d.content();
                    body.append(b.toString(StandardCharsets.UTF_8));
                    if (d.isEndStream()) {
                      finish();
                    }
                  }
                } finally {
                  ReferenceCountUtil.release(msg);
                }
              }

              @Override
              public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                if (evt instanceof Http2ResetFrame r) {
                  done.complete(new Response(0, head, body.toString(), r.errorCode()));
                }
              }

              @Override
              public void channelInactive(ChannelHandlerContext ctx) {
                done.complete(new Response(-1, head, body.toString(), -1));
              }

              private void finish() {
                CharSequence s = head.status();
                done.complete(
                    new Response(
                        s == null ? 0 : Integer.parseInt(s.toString()), head, body.toString(), 0));
              }
            })
        .open()
        .sync()
        .getNow();
  }

  @Override
  public void close() {
    channel.close().awaitUninterruptibly(10, TimeUnit.SECONDS);
    for (Http2GoAwayFrame g : goAways) {
      ReferenceCountUtil.release(g);
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
  }
}
