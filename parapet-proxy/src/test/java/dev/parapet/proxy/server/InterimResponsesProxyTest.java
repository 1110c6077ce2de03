package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.RawOrigin;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Interim responses (RFC 9110 §15.2) through the proxy on loopback, on a caching route, with raw
 * sockets on both sides: the origin's {@code 103 Early Hints} and {@code 100 Continue} reach the
 * client before the final response, which is handled as always (stored here); the interim response
 * is never stored, never doubled, never sent to an HTTP/1.0 client.
 */
class InterimResponsesProxyTest {
  private static final String EARLY_HINTS =
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";
  private static final String CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n";
  private static final String FINAL =
      "HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nContent-Length: 5\r\n\r\nhello";

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private ProxyServer proxy(RawOrigin o) throws InterruptedException {
    EdgeCache cache =
        new EdgeCache(
            ProxyFixture.NAME,
            CacheDefaultsProxyTest.defaults(),
            Runnable::run,
            System::currentTimeMillis,
            Map.of("r", EdgeCache.RouteRules.DEFAULTS));
    return fx.proxy()
        .routes(route("r", "/", "o"))
        .origins(pool("o", o.address()).timeout(Duration.ofSeconds(10)).build())
        .cache(cache)
        .start();
  }

  private static String get(String path, String version, String... fields) {
    StringBuilder b = new StringBuilder("GET " + path + " " + version + "\r\nHost: a.test\r\n");
    for (String f : fields) {
      b.append(f).append("\r\n");
    }
    return b.append("Connection: close\r\n\r\n").toString();
  }

  private static int count(String text, String part) {
    int n = 0;
    for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
      n++;
    }
    return n;
  }

  @Test
  void earlyHintsReachTheClientBeforeTheFinalResponseWhichAloneIsStored() throws Exception {
    RawOrigin o = fx.closeLater(RawOrigin.answering(EARLY_HINTS + FINAL));
    ProxyServer p = proxy(o);

    String first = ProxyFixture.raw(p.port(), get("/page", "HTTP/1.1"));
    assertThat(first).startsWith("HTTP/1.1 103 Early Hints\r\n");
    String hints = first.substring(0, first.indexOf("\r\n\r\n") + 4);
    assertThat(hints)
        .contains("\r\nLink: </style.css>; rel=preload\r\n")
        .containsIgnoringCase("\r\nVia: ")
        .doesNotContainIgnoringCase("content-length")
        .doesNotContainIgnoringCase("transfer-encoding");
    String rest = first.substring(hints.length());
    assertThat(rest).startsWith("HTTP/1.1 200 OK\r\n").endsWith("\r\n\r\nhello");
    assertThat(count(first, "HTTP/1.1 ")).isEqualTo(2);

    // the cache stored the final response only: a hit, without the hints, the origin asked once
    String second = ProxyFixture.raw(p.port(), get("/page", "HTTP/1.1"));
    assertThat(second).startsWith("HTTP/1.1 200 OK\r\n").endsWith("\r\n\r\nhello");
    assertThat(second).contains("Cache-Status: " + ProxyFixture.NAME + "; hit");
    assertThat(second).doesNotContain("103").doesNotContain("Link:");
    assertThat(o.requests()).hasSize(1);
  }

  /** Over HTTP/2 the hints are a HEADERS frame of their own before the final response's. */
  @Test
  void earlyHintsReachAnHttp2ClientBeforeTheFinalResponse(@TempDir Path dir) throws Exception {
    Curl.assumeHttp2();
    RawOrigin o = fx.closeLater(RawOrigin.answering(EARLY_HINTS + FINAL));
    ProxyServer p = proxy(o);
    Path headers = dir.resolve("headers.txt");

    Process curl =
        new ProcessBuilder(
                "curl",
                "-sS",
                "--http2-prior-knowledge",
                "--max-time",
                "30",
                "-H",
                "Host: a.test",
                "-D",
                headers.toString(),
                "-o",
                "/dev/null",
                "http://127.0.0.1:" + p.port() + "/h2page")
            .redirectErrorStream(true)
            .start();
    String out = new String(curl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(curl.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(curl.exitValue()).as(out).isZero();

    String dump = Files.readString(headers, StandardCharsets.ISO_8859_1);
    assertThat(dump).startsWith("HTTP/2 103");
    assertThat(dump.indexOf("link: </style.css>; rel=preload"))
        .isPositive()
        .isLessThan(dump.indexOf("HTTP/2 200"));
    assertThat(count(dump, "HTTP/2 ")).isEqualTo(2);
  }

  @Test
  void anHttp10ClientGetsNoInterimResponse() throws Exception {
    RawOrigin o = fx.closeLater(RawOrigin.answering(EARLY_HINTS + FINAL));
    ProxyServer p = proxy(o);
    String answer = ProxyFixture.raw(p.port(), get("/old", "HTTP/1.0"));
    assertThat(answer).startsWith("HTTP/1.1 200 OK\r\n").doesNotContain("103");
  }

  @Test
  void anOrigins100ContinueIsForwardedUnlessTheProxyAlreadySentOne() throws Exception {
    RawOrigin o = fx.closeLater(RawOrigin.answering(CONTINUE + FINAL));
    ProxyServer p = proxy(o);

    String unasked = ProxyFixture.raw(p.port(), get("/u", "HTTP/1.1"));
    assertThat(unasked).startsWith("HTTP/1.1 100 Continue\r\n");
    assertThat(unasked.substring(unasked.indexOf("\r\n\r\n") + 4)).startsWith("HTTP/1.1 200 OK");

    String upload =
        "POST /upload HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continue\r\nContent-Length: 3\r\n"
            + "Connection: close\r\n\r\nabc";
    String answer = ProxyFixture.raw(p.port(), upload);
    assertThat(count(answer, "100 Continue")).as(answer).isEqualTo(1);
    assertThat(answer).startsWith("HTTP/1.1 100 Continue\r\n").endsWith("\r\n\r\nhello");
    assertThat(o.bodies()).contains("abc");
    assertThat(o.requests().get(o.requests().size() - 1)).doesNotContainIgnoringCase("expect");
  }
}
