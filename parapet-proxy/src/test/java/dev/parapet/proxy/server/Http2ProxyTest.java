package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.Scope;
import dev.parapet.proxy.testing.CacheOrigin;
import dev.parapet.proxy.testing.PathOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestOrigin;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** HTTP/2 with prior knowledge (h2c) through the proxy with curl, as a client would use it. */
class Http2ProxyTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();
  @TempDir Path dir;

  @BeforeAll
  static void curl() throws Exception {
    Curl.assumeHttp2();
  }

  @Test
  void getGoesThroughTheFlowOverHttp2() throws Exception {
    TestOrigin origin = fx.testOrigin();
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(pool("o", origin.address()).build())
            .start();

    Curl.Response r = Curl.h2c(dir, "http://127.0.0.1:" + p.port() + "/hello?x=1");

    assertThat(r.protocol()).isEqualTo("HTTP/2");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("hello from origin /hello?x=1");
    assertThat(r.header("via")).isEqualTo("2 " + ProxyFixture.NAME);
    assertThat(r.header("x-origin")).isEqualTo("test");
    assertThat(r.header("x-hop")).isNull();
    assertThat(origin.seenHeaders).hasSize(1);
    assertThat(origin.seenHeaders.get(0).get("Via")).containsExactly("2 " + ProxyFixture.NAME);
    assertThat(origin.seenHeaders.get(0).get("Host")).containsExactly("127.0.0.1:" + p.port());
  }

  @Test
  void aCacheHitOverHttp2SaysSoInCacheStatus() throws Exception {
    CacheOrigin origin = fx.cacheOrigin();
    origin.headers("Cache-Control", "max-age=60");
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(pool("o", origin.address()).build())
            .cache(ProxyFixture.edgeCache("r"))
            .start();
    String url = "http://127.0.0.1:" + p.port() + "/page";

    Curl.Response first = Curl.h2c(dir, url);
    Curl.Response second = Curl.h2c(dir, url);

    assertThat(first.status()).isEqualTo(200);
    assertThat(first.header("cache-status")).contains("fwd=miss");
    assertThat(second.status()).isEqualTo(200);
    assertThat(second.header("cache-status")).startsWith(ProxyFixture.NAME + "; hit");
    assertThat(second.body()).isEqualTo(first.body());
    assertThat(second.header("via")).isEqualTo("2 " + ProxyFixture.NAME);
    assertThat(origin.count()).isEqualTo(1);
  }

  @Test
  void theProxysOwn503CarriesProxyStatusAndRetryAfterOverHttp2() throws Exception {
    TestOrigin origin = fx.testOrigin();
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(pool("o", origin.address()).build())
            .start();
    p.breakers()
        .get(BreakerKey.of(Scope.ROUTE, "r"), System.nanoTime())
        .forceOpen(System.nanoTime());

    Curl.Response r = Curl.h2c(dir, "http://127.0.0.1:" + p.port() + "/x");

    assertThat(r.protocol()).isEqualTo("HTTP/2");
    assertThat(r.status()).isEqualTo(503);
    assertThat(r.header("proxy-status"))
        .startsWith(ProxyFixture.NAME + "; error=destination_unavailable");
    assertThat(Long.parseLong(r.header("retry-after"))).isPositive();
    assertThat(r.header("content-type")).isEqualTo("application/problem+json");
    assertThat(r.body()).contains("\"status\":503");
    assertThat(origin.calls.get()).isZero();
  }

  @Test
  void aPostBodyLargerThanTheStreamWindowReachesTheOrigin() throws Exception {
    TestOrigin origin = fx.testOrigin();
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(pool("o", origin.address()).build())
            .start();
    byte[] body = new byte[300_000]; // several times the 64 KiB initial window: flow control
    for (int i = 0; i < body.length; i++) {
      body[i] = (byte) ('a' + i % 26);
    }
    Path file = Files.write(dir.resolve("body.bin"), body);

    Curl.Response r =
        Curl.h2c(
            dir,
            "--data-binary",
            "@" + file,
            "-H",
            "Content-Type: application/octet-stream",
            "http://127.0.0.1:" + p.port() + "/upload");
    Curl.Response chunked =
        Curl.h2c(
            dir,
            "--data-binary",
            "small body",
            "-H",
            "Content-Length:", // curl leaves the length out: the body's end is END_STREAM
            "http://127.0.0.1:" + p.port() + "/upload2");

    assertThat(r.status()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("hello from origin /upload");
    assertThat(origin.seenBodies.get(0)).isEqualTo(body);
    assertThat(chunked.status()).isEqualTo(200);
    assertThat(new String(origin.seenBodies.get(1), StandardCharsets.UTF_8))
        .isEqualTo("small body");
  }

  @Test
  void concurrentStreamsOnOneConnectionAreHandledTogether() throws Exception {
    PathOrigin origin = fx.pathOrigin("o");
    origin.hold = true;
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(pool("o", origin.address()).build())
            .start();
    try (H2Client client = new H2Client(p.port())) {
      List<CompletableFuture<H2Client.Response>> responses = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        responses.add(client.request(H2Client.get(p.port(), "/s" + i), null));
      }
      // All ten wait at the origin at once: the streams run side by side on one connection.
      await().atMost(Duration.ofSeconds(30)).until(() -> origin.held.get() == 10);
      origin.releaseHeld();
      for (int i = 0; i < 10; i++) {
        H2Client.Response r = responses.get(i).get(30, TimeUnit.SECONDS);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("o /s" + i);
      }
      assertThat(p.metrics().scrape())
          .contains("parapet_h2_connections{listener=\"edge-test\"} 1.0");
    }
  }
}
