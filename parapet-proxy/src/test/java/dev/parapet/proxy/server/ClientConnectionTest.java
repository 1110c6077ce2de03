package dev.parapet.proxy.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.CacheKey;
import dev.parapet.proxy.cache.CachedResponse;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.flow.ProxyContext;
import dev.parapet.proxy.http1.ClientCodec;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestContexts;
import dev.parapet.proxy.upstream.OriginPool;
import dev.parapet.proxy.upstream.OriginSettings;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The HTTP/1.1 connection handler alone, on Netty's {@link EmbeddedChannel}: requests go in as the
 * decoder emits them, responses come out as objects. What is HTTP/1.1 about a response — {@code
 * Via}, {@code Connection: close}, pipelining order, skipping the end of an answered request,
 * closing when a body cannot be skipped — is decided here, without a socket or an origin.
 */
class ClientConnectionTest {
  private static final String NAME = "edge-test";
  private final EdgeCache cache = ProxyFixture.edgeCache("cached");
  private final ProxyContext px = context();
  private final EmbeddedChannel ch = new EmbeddedChannel();

  private ProxyContext context() {
    OriginPool pool =
        new OriginPool(
            OriginSettings.defaults("o", List.of(new InetSocketAddress("127.0.0.1", 9))),
            NioSocketChannel.class);
    return TestContexts.builder(
            List.of(new Route("cached", null, "/cached/", "o", Duration.ofSeconds(8))),
            Map.of("o", pool),
            BreakerPolicy.defaults())
        .cache(cache)
        .build();
  }

  private void connect() {
    RequestHeadTimer timer =
        new RequestHeadTimer(
            Duration.ofSeconds(10).toNanos(),
            Duration.ofSeconds(60).toNanos(),
            px.responses(),
            px.viaMember(),
            px.metrics(),
            Ticker.system());
    ch.pipeline().addLast(new ClientConnection(() -> px, timer, () -> false));
  }

  @AfterEach
  void close() {
    ch.finishAndReleaseAll();
  }

  private static HttpRequest get(String path, String... headers) {
    HttpHeaders h = new DefaultHttpHeaders().set("Host", "example.test");
    for (int i = 0; i < headers.length; i += 2) {
      h.add(headers[i], headers[i + 1]);
    }
    return new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, path, h);
  }

  /** A request as the decoder hands it on: its head, then its (empty) last content. */
  private void send(HttpRequest request) {
    ch.writeInbound(request, LastHttpContent.EMPTY_LAST_CONTENT);
  }

  private FullHttpResponse response() {
    FullHttpResponse r = ch.readOutbound();
    assertThat(r).as("a response").isNotNull();
    return r;
  }

  private void store(String path, String body) {
    HttpHeaders h = new DefaultHttpHeaders().set("Cache-Control", "max-age=60");
    cache
        .store()
        .store(
            CacheKey.of("example.test", path),
            CachedResponse.of(
                200,
                h,
                body.getBytes(StandardCharsets.UTF_8),
                new DefaultHttpHeaders(),
                System.nanoTime(),
                System.nanoTime(),
                System.currentTimeMillis(),
                0));
  }

  private static String body(FullHttpResponse r) {
    return r.content().toString(StandardCharsets.UTF_8);
  }

  @Test
  void aLocalAnswerKeepsTheConnectionAndCarriesThisHop() {
    connect();
    send(get("/nowhere"));

    FullHttpResponse r = response();
    assertThat(r.status().code()).isEqualTo(404);
    assertThat(r.headers().get("Via")).isEqualTo("1.1 " + NAME);
    assertThat(r.headers().get("Proxy-Status")).startsWith(NAME + "; error=destination_not_found");
    assertThat(r.headers().contains("Connection")).isFalse();
    r.release();
    assertThat(ch.isOpen()).isTrue();

    send(get("/nowhere/either")); // the connection goes on to its next request
    FullHttpResponse next = response();
    assertThat(next.status().code()).isEqualTo(404);
    next.release();
  }

  @Test
  void pipelinedRequestsAreAnsweredInTheirOrder() {
    store("/cached/a", "first");
    store("/cached/b", "second");
    connect();

    ch.writeInbound(
        get("/cached/a"),
        LastHttpContent.EMPTY_LAST_CONTENT,
        get("/nowhere"),
        LastHttpContent.EMPTY_LAST_CONTENT,
        get("/cached/b"),
        LastHttpContent.EMPTY_LAST_CONTENT);

    FullHttpResponse a = response();
    FullHttpResponse missing = response();
    FullHttpResponse b = response();
    assertThat(body(a)).isEqualTo("first");
    assertThat(a.headers().get("Cache-Status")).startsWith(NAME + "; hit");
    assertThat(a.headers().get("Via")).isEqualTo("1.1 " + NAME);
    assertThat(missing.status().code()).isEqualTo(404);
    assertThat(body(b)).isEqualTo("second");
    a.release();
    missing.release();
    b.release();
  }

  @Test
  void theEndOfAnAnsweredRequestIsSkippedBeforeTheNextOne() {
    store("/cached/a", "first");
    connect();
    ch.writeInbound(get("/nowhere")); // answered before its last content arrives
    FullHttpResponse r = response();
    assertThat(r.status().code()).isEqualTo(404);
    r.release();

    ch.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT, get("/cached/a"));
    ch.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT);

    FullHttpResponse hit = response();
    assertThat(body(hit)).isEqualTo("first");
    hit.release();
    assertThat(ch.isOpen()).isTrue();
  }

  @Test
  void aMalformedRequestIsAnsweredAndTheConnectionCloses() {
    connect();
    HttpRequest noHost =
        new DefaultHttpRequest(
            HttpVersion.HTTP_1_1, HttpMethod.GET, "/x", new DefaultHttpHeaders());
    send(noHost);

    FullHttpResponse r = response();
    assertThat(r.status().code()).isEqualTo(400);
    assertThat(r.headers().get("Connection")).isEqualToIgnoringCase("close");
    r.release();
    ch.runPendingTasks();
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void aClientThatAsksToCloseIsAnsweredThenClosed() {
    connect();
    send(get("/nowhere", "Connection", "close"));

    FullHttpResponse r = response();
    assertThat(r.headers().get("Connection")).isEqualToIgnoringCase("close");
    r.release();
    ch.runPendingTasks();
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void anAnswerBeforeTheBodyArrivedClosesTheConnection() {
    connect();
    HttpRequest post = get("/nowhere", "Content-Length", "10");
    post.setMethod(HttpMethod.POST);
    ch.writeInbound(post); // answered 404 while its body is still to come

    FullHttpResponse r = response();
    assertThat(r.status().code()).isEqualTo(404);
    r.release();
    ch.runPendingTasks();
    assertThat(ch.isOpen()).as("a body that is not read cannot be skipped safely").isFalse();
  }

  @Test
  void aRequestThatCameBackIsRefusedAsALoop() {
    connect();
    send(get("/cached/a", "Via", "1.1 shield, 1.1 " + NAME));

    FullHttpResponse r = response();
    assertThat(r.status().code()).isEqualTo(508);
    assertThat(r.headers().get("Proxy-Status")).contains("proxy_loop_detected");
    r.release();
  }

  @Test
  void anOverloadedListenerAsksItsClientsToGoElsewhere() {
    store("/cached/a", "first");
    connect();
    px.admission().overloadLevel(OverloadLevel.STOP_ACCEPTING, System.nanoTime());

    send(get("/cached/a"));

    FullHttpResponse r = response();
    assertThat(body(r)).isEqualTo("first"); // hits are served, then the connection closes
    assertThat(r.headers().get("Connection")).isEqualToIgnoringCase("close");
    r.release();
    ch.runPendingTasks();
    assertThat(ch.isOpen()).isFalse();
  }

  /**
   * A request answered inside the flow's start (no route here; an open breaker, shedding alike)
   * gives its fields back to the decoder as one answered later does: the next request is decoded
   * into the same field set, and reads its own values.
   */
  @Test
  void aRequestAnsweredAtOnceGivesItsFieldsBackToTheDecoder() {
    List<HttpHeaders> seen = new ArrayList<>();
    ch.pipeline().addLast(ClientCodec.handlers(8192, 32 * 1024, 16 * 1024));
    ch.pipeline()
        .addLast(
            new ChannelInboundHandlerAdapter() {
              @Override
              public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof HttpRequest r) {
                  seen.add(r.headers());
                }
                ctx.fireChannelRead(msg);
              }
            });
    connect();
    for (String tag : List.of("first", "second-and-longer", "3")) {
      ch.writeInbound(
          Unpooled.copiedBuffer(
              "GET /nowhere/"
                  + tag
                  + " HTTP/1.1\r\nHost: example.test\r\nX-Tag: "
                  + tag
                  + "\r\n\r\n",
              StandardCharsets.US_ASCII));
      ByteBuf out = ch.readOutbound();
      assertThat(out.toString(StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 404 ");
      out.release();
      assertThat(seen.get(seen.size() - 1).get("X-Tag")).isEqualTo(tag);
    }
    assertThat(seen).hasSize(3);
    assertThat(seen.get(1)).isSameAs(seen.get(0));
    assertThat(seen.get(2)).isSameAs(seen.get(0));
  }
}
