package dev.parapet.bench.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OpenLoopLoadTest {
  private final EventLoopGroup servers =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());

  /** The Host fields the servers received. */
  private final Set<String> hosts = ConcurrentHashMap.newKeySet();

  @AfterEach
  void stop() {
    servers.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** A keep-alive server on loopback answering every request with {@code status}; counts them. */
  private URI server(HttpResponseStatus status, AtomicInteger requests)
      throws InterruptedException {
    return server(status, requests, false, null);
  }

  /**
   * A server on loopback answering every request with {@code status}, with {@code Connection:
   * close} and closing the connection after each answer when {@code close}, and with {@code
   * proxyStatus} as its {@code Proxy-Status} when given; counts them.
   */
  private URI server(
      HttpResponseStatus status,
      AtomicInteger requests,
      boolean close,
      @Nullable String proxyStatus)
      throws InterruptedException {
    Channel ch =
        new ServerBootstrap()
            .group(servers)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel c) {
                    c.pipeline()
                        .addLast(new HttpServerCodec())
                        .addLast(new HttpObjectAggregator(1024))
                        .addLast(
                            new SimpleChannelInboundHandler<FullHttpRequest>() {
                              @Override
                              protected void channelRead0(
                                  ChannelHandlerContext ctx, FullHttpRequest req) {
                                requests.incrementAndGet();
                                hosts.add(String.valueOf(req.headers().get(HttpHeaderNames.HOST)));
                                DefaultFullHttpResponse r =
                                    new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status);
                                r.headers().set(HttpHeaderNames.CONTENT_LENGTH, 0);
                                if (proxyStatus != null) {
                                  r.headers().set("Proxy-Status", proxyStatus);
                                }
                                if (close) {
                                  r.headers()
                                      .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                                  ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
                                } else {
                                  ctx.writeAndFlush(r);
                                }
                              }
                            });
                  }
                })
            .bind("127.0.0.1", 0)
            .sync()
            .channel();
    int port = ((InetSocketAddress) ch.localAddress()).getPort();
    return URI.create("http://127.0.0.1:" + port + "/x");
  }

  @Test
  void interleavedTargetsEachGetTheRateAndTheirOwnFigures() throws Exception {
    AtomicInteger toA = new AtomicInteger();
    AtomicInteger toB = new AtomicInteger();
    URI a = server(HttpResponseStatus.OK, toA);
    URI b = server(HttpResponseStatus.SERVICE_UNAVAILABLE, toB);

    // 200 req/s to each for 1 s after 0.5 s of warm-up: 300 sent to each, the last 200 measured.
    List<OpenLoopLoad.Result> results = OpenLoopLoad.run(List.of(a, b), 200, 1, 4, 0.5);

    assertThat(results).extracting(OpenLoopLoad.Result::uri).containsExactly(a, b);
    assertThat(toA.get()).isEqualTo(300);
    assertThat(toB.get()).isEqualTo(300);
    OpenLoopLoad.Result ra = results.get(0);
    OpenLoopLoad.Result rb = results.get(1);
    assertThat(ra.sent()).isEqualTo(200);
    assertThat(ra.statuses()).isEqualTo(Map.of(200, 200L));
    assertThat(rb.statuses()).isEqualTo(Map.of(503, 200L));
    assertThat(ra.latency().getTotalCount()).isEqualTo(200);
    assertThat(rb.latency().getTotalCount()).isEqualTo(200);
    assertThat(ra.describe("t1.")).contains("t1.url " + a, "t1.status_200 200", "t1.p99_ms ");
    assertThat(rb.describe("")).startsWith("rate_achieved ").contains("status_503 200");
    // as curl and wrk send it: a cache keyed on Host sees the same entry for all three tools
    assertThat(hosts).containsExactlyInAnyOrder(a.getRawAuthority(), b.getRawAuthority());
  }

  @Test
  void figuresPerStatusAndPerIntervalCountEachMeasuredRequestOnce() throws Exception {
    AtomicInteger requests = new AtomicInteger();
    URI a = server(HttpResponseStatus.SERVICE_UNAVAILABLE, requests);

    // 200 req/s for 1 s after 0.5 s of warm-up, in 0.5 s intervals: 100 due in each.
    long before = System.currentTimeMillis();
    OpenLoopLoad.Result r = OpenLoopLoad.run(List.of(a), 200, 1, 4, 0.5, 0.5, null).get(0);

    assertThat(r.latencyByStatus()).containsOnlyKeys("503");
    assertThat(r.latencyByStatus().get("503").getTotalCount()).isEqualTo(200);
    assertThat(r.intervals())
        .extracting(OpenLoopLoad.Interval::startSeconds)
        .containsExactly(0.0, 0.5);
    assertThat(r.intervals())
        .allSatisfy(i -> assertThat(i.latencyByStatus().get("503").getTotalCount()).isEqualTo(100));
    // Measuring began after the warm-up, and before the run ended.
    assertThat(r.measuredFromEpochMillis()).isBetween(before + 500, System.currentTimeMillis());
    assertThat(r.describe(""))
        .contains("status_503_p99_ms ", "interval_s 0 status 503 count 100 p50_ms ")
        .contains("interval_s 0.5 status 503 count 100 ");
    // Without an interval asked, no interval lines.
    OpenLoopLoad.Result plain = OpenLoopLoad.run(List.of(a), 200, 0.2, 4, 0).get(0);
    assertThat(plain.intervals()).isEmpty();
    assertThat(plain.describe("")).doesNotContain("interval_s");
  }

  @Test
  void connectionsTheServerClosesAreReplacedAndEveryRequestIsAnswered() throws Exception {
    AtomicInteger requests = new AtomicInteger();
    URI a = server(HttpResponseStatus.OK, requests, true, null);

    // 2 connections, each closed after one answer: 300 requests need ~300 new connections.
    OpenLoopLoad.Result r = OpenLoopLoad.run(List.of(a), 200, 1, 2, 0.5).get(0);

    assertThat(requests.get()).isEqualTo(300);
    assertThat(r.statuses()).isEqualTo(Map.of(200, 200L));
    assertThat(r.errors()).isZero();
    assertThat(r.reconnects()).isGreaterThanOrEqualTo(298);
  }

  @Test
  void aSplitKeepsFiguresApartByTheValueAHeaderTakes() throws Exception {
    AtomicInteger toA = new AtomicInteger();
    AtomicInteger toB = new AtomicInteger();
    URI a =
        server(
            HttpResponseStatus.SERVICE_UNAVAILABLE,
            toA,
            false,
            "soak; error=proxy_internal_response; details=\"shed (QUEUE_FULL)\"");
    URI b = server(HttpResponseStatus.SERVICE_UNAVAILABLE, toB, false, null);
    OpenLoopLoad.Split split = OpenLoopLoad.Split.parse("Proxy-Status=\\(([A-Z_]+)\\)");

    List<OpenLoopLoad.Result> results = OpenLoopLoad.run(List.of(a, b), 200, 1, 4, 0.5, 0, split);

    OpenLoopLoad.Result ra = results.get(0);
    assertThat(ra.latencyByStatus()).containsOnlyKeys("503", "503.QUEUE_FULL");
    assertThat(ra.latencyByStatus().get("503.QUEUE_FULL").getTotalCount()).isEqualTo(200);
    assertThat(ra.latencyByStatus().get("503").getTotalCount()).isEqualTo(200);
    assertThat(ra.statuses()).isEqualTo(Map.of(503, 200L)); // the split adds figures, not requests
    assertThat(ra.describe("t1.")).contains("t1.status_503.QUEUE_FULL_p99_ms ");
    assertThat(results.get(1).latencyByStatus()).containsOnlyKeys("503");
    assertThatThrownBy(() -> OpenLoopLoad.Split.parse("Proxy-Status"))
        .hasMessage("openloop.split : Proxy-Status (expected: HEADER=REGEX)");
  }
}
