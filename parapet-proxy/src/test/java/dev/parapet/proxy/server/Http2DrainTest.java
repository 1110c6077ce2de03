package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.overload.OverloadConfig;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.overload.OverloadResource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.overload.OverloadMonitor;
import dev.parapet.proxy.testing.PathOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestOrigin;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How a stop and an overload end client connections: HTTP/2 ones with GOAWAY naming the last stream
 * taken (the streams it covers finish, the client retries later ones elsewhere), HTTP/1.1 ones with
 * {@code Connection: close} on their next response.
 */
class Http2DrainTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  @Test
  void drainSaysDrainingAndSendsGoAwayWithTheLastStreamIdAndLetsTheOpenStreamFinish()
      throws Exception {
    PathOrigin origin = fx.pathOrigin("o");
    origin.hold = true;
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(pool("o", origin.address()).build())
            .start();
    dev.parapet.proxy.admin.AdminServer admin = fx.admin(p);
    admin.ready(true);
    assertThat(fx.call(admin, "GET", "/readyz", null).body()).isEqualTo("ready\n");
    try (H2Client c = new H2Client(p.port())) {
      CompletableFuture<H2Client.Response> held = c.request(H2Client.get(p.port(), "/slow"), null);
      await().atMost(WAIT).until(() -> origin.held.get() == 1);

      CompletableFuture<Long> drained = DrainTest.drainAsync(p);
      await().atMost(WAIT).until(p::draining);
      HttpResponse<String> ready = fx.call(admin, "GET", "/readyz", null);
      assertThat(ready.statusCode()).isEqualTo(503);
      assertThat(ready.body()).isEqualTo("draining\n");
      assertThat(fx.call(admin, "GET", "/admin/dashboard.json", null).body())
          .containsPattern("\"state\"\\s*:\\s*\"draining\"");

      await().atMost(WAIT).until(() -> !c.goAways.isEmpty());
      Http2GoAwayFrame g = c.goAways.get(0);
      assertThat(g.errorCode()).isEqualTo(Http2Error.NO_ERROR.code());
      assertThat(g.lastStreamId()).isEqualTo(c.streamIds.get(0));
      assertThat(drained).isNotDone();
      assertThat(c.closed).isNotDone(); // the stream GOAWAY covers goes on

      origin.releaseHeld();
      assertThat(held.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
      assertThat(drained.get(30, TimeUnit.SECONDS)).isZero();
      await().atMost(WAIT).until(() -> c.closed.isDone());
      assertThat(p.metrics().scrape())
          .contains("parapet_h2_goaway_total{listener=\"edge-test\",reason=\"drain\"} 1.0");
    }
  }

  @Test
  void whileDrainingAnHttp1ResponseSaysConnectionCloseAndTheConnectionCloses() throws Exception {
    PathOrigin slow = fx.pathOrigin("slow");
    slow.hold = true;
    TestOrigin fast = fx.testOrigin();
    ProxyServer p =
        fx.proxy()
            .routes(route("slow", "/slow", "slow"), route("fast", "/", "fast"))
            .origins(pool("slow", slow.address()).build(), pool("fast", fast.address()).build())
            .start();
    try (Socket s = new Socket("127.0.0.1", p.port())) {
      s.setSoTimeout(30_000);
      String before = exchange(s, "/a");
      assertThat(before).startsWith("HTTP/1.1 200").doesNotContainIgnoringCase("connection: close");

      send(s, "/slow/b"); // this connection is busy when the drain begins
      await().atMost(WAIT).until(() -> slow.held.get() == 1);
      CompletableFuture<Long> drained = DrainTest.drainAsync(p);
      await().atMost(WAIT).until(p::draining);
      assertThat(drained).isNotDone();

      slow.releaseHeld();
      String during = read(s);
      assertThat(during).startsWith("HTTP/1.1 200").containsIgnoringCase("connection: close");
      assertThat(s.getInputStream().read()).isEqualTo(-1); // closed after that response
      assertThat(drained.get(30, TimeUnit.SECONDS)).isZero();
    }
  }

  @Test
  void whenTheOverloadManagerStopsAcceptingHttp2ConnectionsGetGoAway() throws Exception {
    AtomicLong heap = new AtomicLong(Double.doubleToLongBits(0.10));
    OverloadMonitor overload =
        new OverloadMonitor(
            OverloadConfig.none()
                .with(OverloadResource.HEAP, OverloadLevel.STOP_ACCEPTING, 0.95)
                .withHysteresis(0.05, Duration.ZERO),
            () -> Double.longBitsToDouble(heap.get()),
            () -> Double.NaN,
            Ticker.system(),
            Duration.ofMillis(20),
            Duration.ofMillis(20));
    TestOrigin origin = fx.testOrigin();
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(pool("o", origin.address()).build())
            .overload(overload)
            .start();
    try (H2Client c = new H2Client(p.port())) {
      H2Client.Response first =
          c.request(H2Client.get(p.port(), "/a"), null).get(30, TimeUnit.SECONDS);
      assertThat(first.status()).isEqualTo(200);
      assertThat(c.goAways).isEmpty();

      heap.set(Double.doubleToLongBits(0.99));

      await().atMost(WAIT).until(() -> c.closed.isDone());
      assertThat(c.goAways)
          .extracting(Http2GoAwayFrame::errorCode, Http2GoAwayFrame::lastStreamId)
          .containsExactly(org.assertj.core.groups.Tuple.tuple(0L, c.streamIds.get(0)));
      assertThat(p.metrics().scrape())
          .contains("parapet_h2_goaway_total{listener=\"edge-test\",reason=\"overload\"} 1.0");
    }
  }

  /** Sends a keep-alive GET for {@code path} on {@code s} and reads its whole response. */
  static String exchange(Socket s, String path) throws IOException {
    send(s, path);
    return read(s);
  }

  private static void send(Socket s, String path) throws IOException {
    s.getOutputStream()
        .write(
            ("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
  }

  /** Reads one whole response (a Content-Length body) from {@code s}. */
  private static String read(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("closed in the response head: " + head);
      }
      head.write(b);
    }
    String h = head.toString(StandardCharsets.ISO_8859_1);
    Matcher m =
        Pattern.compile("(?im)^content-length:\\s*(\\d+)").matcher(h.toLowerCase(Locale.ROOT));
    int length = m.find() ? Integer.parseInt(m.group(1)) : 0;
    byte[] body = in.readNBytes(length);
    return h + new String(body, StandardCharsets.ISO_8859_1);
  }
}
