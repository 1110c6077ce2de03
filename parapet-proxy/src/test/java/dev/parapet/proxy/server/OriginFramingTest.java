package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.raw;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.RawOrigin;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What a caching proxy does with origin responses whose framing it refuses or repairs, and what its
 * {@code Cache-Status} claims, over real sockets with an origin that writes exact bytes. Every
 * response here would be stored if it were accepted ({@code max-age=60}).
 */
class OriginFramingTest {
  private static final String NAME = ProxyFixture.NAME;
  private static final String STORABLE = "HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\n";
  private static final String CHUNKED_BODY = "5\r\nhello\r\n0\r\n\r\n";

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  /**
   * A proxy whose one caching route sends every path to {@code origin}; its breaker stays shut. One
   * event loop, so every request may use the one origin connection a previous one left for reuse.
   */
  private ProxyServer cachingProxy(InetSocketAddress origin) throws InterruptedException {
    EdgeCache cache =
        new EdgeCache(
            NAME,
            new EdgeCache.Settings(64L * 1024 * 1024, Duration.ofSeconds(300), Duration.ZERO),
            Map.of("r", Duration.ZERO),
            Runnable::run,
            System::currentTimeMillis);
    return fx.proxy()
        .routes(route("r", "/", "o"))
        .origins(
            pool("o", origin).breaker(BreakerPolicy.builder().minRequests(1000).build()).build())
        .cache(cache)
        .threads(1)
        .start();
  }

  private static String cacheStatus(HttpResponse<?> r) {
    return r.headers().firstValue("Cache-Status").orElse("");
  }

  /** The values of field {@code name} in the head of a raw answer, in order. */
  private static List<String> fields(String answer, String name) {
    List<String> values = new ArrayList<>();
    String head = answer.substring(0, Math.max(0, answer.indexOf("\r\n\r\n")));
    for (String line : head.split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && line.substring(0, colon).equalsIgnoreCase(name)) {
        values.add(line.substring(colon + 1).trim());
      }
    }
    return values;
  }

  private static double malformedAttempts(ProxyServer p) {
    String series = "parapet_origin_attempts_total{origin=\"o\",result=\"malformed_response\"} ";
    for (String line : p.metrics().scrape().split("\n")) {
      if (line.startsWith(series)) {
        return Double.parseDouble(line.substring(series.length()));
      }
    }
    return 0;
  }

  static Stream<Arguments> refused() {
    return Stream.of(
        Arguments.of(
            "gzip, chunked", STORABLE + "Transfer-Encoding: gzip, chunked\r\n\r\n" + CHUNKED_BODY),
        Arguments.of(
            "chunked, chunked",
            STORABLE + "Transfer-Encoding: chunked, chunked\r\n\r\n" + CHUNKED_BODY),
        Arguments.of(
            "chunked in two fields",
            STORABLE
                + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
                + CHUNKED_BODY),
        Arguments.of(
            "chunked not last",
            STORABLE + "Transfer-Encoding: chunked, gzip\r\n\r\n" + CHUNKED_BODY),
        Arguments.of("deflate alone", STORABLE + "Transfer-Encoding: deflate\r\n\r\nhello"),
        Arguments.of(
            "an unknown coding",
            STORABLE + "Transfer-Encoding: x-zip, chunked\r\n\r\n" + CHUNKED_BODY),
        Arguments.of(
            "chunked in HTTP/1.0",
            "HTTP/1.0 200 OK\r\nCache-Control: max-age=60\r\nTransfer-Encoding: chunked\r\n\r\n"
                + CHUNKED_BODY),
        Arguments.of(
            "Content-Length and chunked",
            STORABLE + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + CHUNKED_BODY),
        Arguments.of("differing lengths in a list", STORABLE + "Content-Length: 5, 6\r\n\r\nhello"),
        Arguments.of(
            "differing lengths in two fields",
            STORABLE + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello"),
        Arguments.of("a signed length", STORABLE + "Content-Length: +5\r\n\r\nhello"),
        Arguments.of("an empty length", STORABLE + "Content-Length: \r\n\r\nhello"),
        Arguments.of(
            "an overflowing length",
            STORABLE + "Content-Length: 99999999999999999999\r\n\r\nhello"),
        Arguments.of(
            "bare line feeds",
            "HTTP/1.1 200 OK\nCache-Control: max-age=60\nContent-Length: 5\n\nhello"),
        Arguments.of(
            "obsolete line folding",
            STORABLE + "X-A: 1\r\n folded\r\nContent-Length: 5\r\n\r\nhello"),
        Arguments.of(
            "a NUL in a value", STORABLE + "X-A: a\u0000b\r\nContent-Length: 5\r\n\r\nhello"),
        Arguments.of("a CR in a value", STORABLE + "X-A: a\rb\r\nContent-Length: 5\r\n\r\nhello"),
        Arguments.of(
            "a status code over 599",
            "HTTP/1.1 600 Odd\r\nCache-Control: max-age=60\r\nContent-Length: 5\r\n\r\nhello"),
        Arguments.of(
            "two spaces before the status code",
            "HTTP/1.1  200 OK\r\nCache-Control: max-age=60\r\nContent-Length: 5\r\n\r\nhello"),
        Arguments.of(
            "101 without an upgrade asked for",
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"
                + STORABLE
                + "Content-Length: 5\r\n\r\nhello"),
        Arguments.of(
            "a header section over 32 KiB",
            STORABLE + "X-Big: " + "x".repeat(40 * 1024) + "\r\nContent-Length: 5\r\n\r\nhello"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refused")
  void aRefusedResponseIs502IsNotStoredAndItsConnectionIsNotReused(String what, String response)
      throws Exception {
    RawOrigin o = fx.closeLater(RawOrigin.answering(response));
    ProxyServer p = cachingProxy(o.address());
    for (int i = 1; i <= 2; i++) {
      HttpResponse<String> r = fx.get(p.port(), "/a");
      assertThat(r.statusCode()).as(what).isEqualTo(502);
      assertThat(r.headers().firstValue("Proxy-Status"))
          .as(what)
          .hasValueSatisfying(v -> assertThat(v).contains("error=http_protocol_error"));
      assertThat(r.body()).as(what).doesNotContain("hello");
      // the origin did not answer as far as the cache is concerned: no fwd-status, nothing stored
      assertThat(cacheStatus(r)).as(what).isEqualTo(NAME + "; fwd=miss");
      assertThat(o.requests()).as(what + ": each request reached the origin").hasSize(i);
      assertThat(o.connections()).as(what + ": a new connection each time").isEqualTo(i);
    }
    assertThat(p.cache().total(EdgeCache.Status.STORED)).isZero();
    assertThat(malformedAttempts(p)).as(what + ": origin failures").isEqualTo(2.0);
  }

  @Test
  void chunkedFramingThatFailsAfterTheHeadCutsTheResponseOffAndNothingIsStored() throws Exception {
    RawOrigin o =
        fx.closeLater(
            RawOrigin.answering(
                STORABLE + "Transfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n"));
    ProxyServer p = cachingProxy(o.address());
    for (int i = 1; i <= 2; i++) {
      String answer = raw(p.port(), "GET /a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
      // Nothing reached the client: a head goes out with the first content, which never came.
      // The client's connection closes instead, with no response to mistake for a whole one.
      assertThat(answer).isEmpty();
      assertThat(o.requests()).hasSize(i);
      assertThat(o.connections()).isEqualTo(i);
    }
    assertThat(p.cache().total(EdgeCache.Status.STORED)).isZero();
    assertThat(malformedAttempts(p)).isEqualTo(2.0);
  }

  @Test
  void equalLengthsReachTheClientAsOneFieldAndTheResponseIsStored() throws Exception {
    RawOrigin o =
        fx.closeLater(
            RawOrigin.answering(
                STORABLE + "content-length: 5, 5\r\nContent-Length: 5\r\n\r\nhello"));
    ProxyServer p = cachingProxy(o.address());
    String first = raw(p.port(), "GET /a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assertThat(first).startsWith("HTTP/1.1 200 OK\r\n").endsWith("\r\n\r\nhello");
    assertThat(fields(first, "Content-Length")).containsExactly("5");
    assertThat(first).contains("\r\ncontent-length: 5\r\n"); // in the origin's spelling
    assertThat(fields(first, "Cache-Status"))
        .containsExactly(NAME + "; fwd=miss; fwd-status=200; stored");
    String second = raw(p.port(), "GET /a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assertThat(fields(second, "Content-Length")).containsExactly("5");
    assertThat(fields(second, "Cache-Status").get(0)).startsWith(NAME + "; hit");
    assertThat(o.requests()).hasSize(1);
  }

  @Test
  void aBodyCutOffByTheOriginIsNeitherClaimedAsStoredNorStored() throws Exception {
    String cut = STORABLE + "Content-Length: 100\r\n\r\n" + "x".repeat(10);
    RawOrigin o = fx.closeLater(RawOrigin.answeringThenClosing(cut));
    ProxyServer p = cachingProxy(o.address());
    for (int i = 1; i <= 2; i++) {
      String answer = raw(p.port(), "GET /a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
      assertThat(answer).startsWith("HTTP/1.1 200 OK\r\n").endsWith("\r\n\r\n" + "x".repeat(10));
      assertThat(fields(answer, "Cache-Status"))
          .containsExactly(NAME + "; fwd=miss; fwd-status=200");
      assertThat(o.requests()).hasSize(i);
    }
    assertThat(p.cache().total(EdgeCache.Status.STORED)).isZero();
  }

  @Test
  void aBodyThatFollowsItsHeadInPiecesIsStoredWithoutAClaimMadeInAdvance() throws Exception {
    // Longer than the piece the origin connection passes on at once (8 KiB): the head goes out
    // with the first piece, before the end of the body is known.
    String body = "y".repeat(20 * 1024);
    RawOrigin o =
        fx.closeLater(
            RawOrigin.answering(STORABLE + "Content-Length: " + body.length() + "\r\n\r\n" + body));
    ProxyServer p = cachingProxy(o.address());
    HttpResponse<String> first = fx.get(p.port(), "/a");
    assertThat(first.body()).isEqualTo(body);
    assertThat(cacheStatus(first)).isEqualTo(NAME + "; fwd=miss; fwd-status=200");
    HttpResponse<String> second = fx.get(p.port(), "/a");
    assertThat(second.body()).isEqualTo(body);
    assertThat(cacheStatus(second)).startsWith(NAME + "; hit");
    assertThat(o.requests()).hasSize(1);
    assertThat(p.cache().total(EdgeCache.Status.STORED)).isEqualTo(1);
  }

  @Test
  void anInterimResponseOtherThan101IsSkippedAndTheConnectionReused() throws Exception {
    RawOrigin o =
        fx.closeLater(
            RawOrigin.answering(
                "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nCache-Control: no-store\r\n"
                    + "Content-Length: 5\r\n\r\nhello"));
    ProxyServer p = cachingProxy(o.address());
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> r = fx.get(p.port(), "/a");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("hello");
    }
    assertThat(o.requests()).hasSize(2);
    assertThat(o.connections()).isEqualTo(1);
    assertThat(o.requests().get(0).toLowerCase(Locale.ROOT)).doesNotContain("upgrade");
  }
}
