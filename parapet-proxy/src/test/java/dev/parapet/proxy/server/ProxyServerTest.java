package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.raw;
import static dev.parapet.proxy.testing.ProxyFixture.request;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestOrigin;
import dev.parapet.proxy.upstream.OriginSettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The data plane over real sockets on loopback. Behaviour only: no upper bounds on timing. */
class ProxyServerTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Decides after 10 calls, so a test opens it with a handful of requests. */
  private static final BreakerPolicy SMALL_BREAKER =
      BreakerPolicy.builder()
          .minRequests(10)
          .open(Duration.ofSeconds(30), Duration.ofMinutes(5), 0.0)
          .build();

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private static OriginSettings originSettings(
      String name, InetSocketAddress host, Duration timeout) {
    return pool(name, host).timeout(timeout).breaker(SMALL_BREAKER).build();
  }

  /** A proxy whose one route sends every path to the pool {@code api} on {@code origin}. */
  private ProxyFixture.ProxySpec proxyTo(InetSocketAddress origin, Duration timeout) {
    return fx.proxy()
        .routes(route("api", "/", "api"))
        .origins(originSettings("api", origin, timeout));
  }

  private ProxyFixture.ProxySpec proxyTo(InetSocketAddress origin) {
    return proxyTo(origin, Duration.ofSeconds(3));
  }

  // ---------------------------------------------------------------------------------------------

  @Test
  void forwardsWithForwardingHeadersAndWithoutHopByHopOnes() throws Exception {
    TestOrigin o = fx.testOrigin();
    ProxyServer p =
        fx.proxy()
            .routes(route("api", "/api/", "api"))
            .origins(originSettings("api", o.address(), Duration.ofSeconds(3)))
            .start();
    String r =
        raw(
            p.port(),
            "GET /api/items?x=1 HTTP/1.1\r\nHost: shop\r\nX-Client: kept\r\nConnection: X-Drop, close\r\n"
                + "X-Drop: dropped\r\nKeep-Alive: 5\r\nProxy-Authorization: secret\r\n\r\n");
    assertThat(r).startsWith("HTTP/1.1 200");
    assertThat(r).endsWith("hello from origin /api/items?x=1");
    assertThat(r.toLowerCase(java.util.Locale.ROOT))
        .contains("via: 1.1 edge-test", "x-origin: test")
        .doesNotContain("x-hop");
    var seen = o.seenHeaders.get(0);
    assertThat(seen.get("X-client")).containsExactly("kept");
    assertThat(seen).doesNotContainKeys("X-drop", "Keep-alive", "Proxy-authorization");
    assertThat(seen.get("Via")).containsExactly("1.1 edge-test");
    assertThat(seen.get("X-forwarded-for")).containsExactly("127.0.0.1");
    assertThat(seen.get("X-forwarded-proto")).containsExactly("http");
    long deadline = Long.parseLong(seen.get("Parapet-deadline").get(0));
    assertThat(deadline).isBetween(1L, 7_950L); // 8 s route timeout minus the 50 ms reserve
  }

  @Test
  void keepAliveServesManyRequestsOnOneConnection() throws Exception {
    TestOrigin o = fx.testOrigin();
    ProxyServer p = proxyTo(o.address()).start();
    String twoRequests =
        "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    String answer = raw(p.port(), twoRequests);
    assertThat(answer).contains("hello from origin /a").contains("hello from origin /b");
    assertThat(answer.split("HTTP/1.1 200", -1)).hasSize(3);
  }

  @Test
  void noRouteIs404WithProxyStatusNeverAnOpenProxy() throws Exception {
    TestOrigin o = fx.testOrigin();
    ProxyServer p =
        fx.proxy()
            .routes(route("api", "/api/", "api"))
            .origins(originSettings("api", o.address(), Duration.ofSeconds(3)))
            .start();
    HttpResponse<String> r = fx.get(p.port(), "/elsewhere");
    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(r.headers().firstValue("Proxy-Status"))
        .contains(
            "edge-test; error=destination_not_found; details=\"no route for this host and path\"");
    assertThat(r.headers().firstValue("Content-Type")).contains("application/problem+json");
    JsonNode body = JSON.readTree(r.body());
    assertThat(body.get("status").asInt()).isEqualTo(404);
    assertThat(body.get("reason").asText()).isEqualTo("destination_not_found");
    // absolute-form naming another host is routed by our table, never fetched from that host
    String answer =
        raw(
            p.port(),
            "GET http://example.org/x HTTP/1.1\r\nHost: example.org\r\nConnection: close\r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 404");
    assertThat(o.calls.get()).isZero();
  }

  @Test
  void breakerOpensOn5xxAndFailsFastWithRetryAfterWhileAHealthyRouteFlows() throws Exception {
    TestOrigin sick = fx.testOrigin();
    TestOrigin healthy = fx.testOrigin();
    sick.status.set(503);
    ProxyServer p =
        fx.proxy()
            .routes(route("api", "/api/", "api"), route("static", "/static/", "static"))
            .origins(
                originSettings("api", sick.address(), Duration.ofSeconds(3)),
                originSettings("static", healthy.address(), Duration.ofSeconds(3)))
            .start();
    for (int i = 0; i < 10; i++) {
      assertThat(fx.get(p.port(), "/api/x").statusCode()).isEqualTo(503);
    }
    CircuitBreaker b = p.breakers().find(BreakerKey.of(Scope.ROUTE, "api"));
    assertThat(b).isNotNull();
    assertThat(b.state())
        .as("%s %s", b.snapshot(System.nanoTime()), b.policy())
        .isEqualTo(State.OPEN);
    int originCalls = sick.calls.get();
    assertThat(originCalls).isEqualTo(10);
    for (int i = 0; i < 20; i++) {
      HttpResponse<String> r = fx.get(p.port(), "/api/x");
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.headers().firstValue("Proxy-Status"))
          .contains("edge-test; error=destination_unavailable; details=\"breaker open\"");
      long retryAfter = Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
      assertThat(retryAfter).isBetween(1L, 30L);
      assertThat(JSON.readTree(r.body()).get("scope").asText()).isEqualTo("route:api");
      assertThat(fx.get(p.port(), "/static/y").statusCode()).isEqualTo(200);
    }
    assertThat(sick.calls.get()).isEqualTo(originCalls); // no calls while open
    assertThat(healthy.calls.get()).isEqualTo(20);
    String metrics = p.metrics().scrape();
    assertThat(metrics)
        .contains("parapet_time_to_open_seconds_count 1\n")
        .contains(
            "parapet_breaker_transitions_total{breaker=\"route:api\",from=\"closed\",reason=\"failure_rate\",to=\"open\"} 1.0")
        .contains("parapet_local_rejections_total{reason=\"breaker_open\"} 20.0");
  }

  @Test
  void refusedConnectionsTripTheBreakerFast() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    ProxyServer p = proxyTo(new InetSocketAddress("127.0.0.1", closedPort)).start();
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = fx.get(p.port(), "/x");
      assertThat(r.statusCode()).isEqualTo(502);
      assertThat(r.headers().firstValue("Proxy-Status"))
          .hasValueSatisfying(v -> assertThat(v).contains("error=connection_refused"));
    }
    HttpResponse<String> r = fx.get(p.port(), "/x");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Proxy-Status"))
        .hasValueSatisfying(v -> assertThat(v).contains("breaker open"));
  }

  @Test
  void aSlowOriginGets504WhenTheAttemptTimesOut() throws Exception {
    TestOrigin o = fx.testOrigin();
    o.delayMillis.set(3_000);
    ProxyServer p = proxyTo(o.address(), Duration.ofMillis(200)).start();
    HttpResponse<String> r = fx.get(p.port(), "/slow");
    assertThat(r.statusCode()).isEqualTo(504);
    assertThat(r.headers().firstValue("Proxy-Status"))
        .hasValueSatisfying(v -> assertThat(v).contains("error=http_response_timeout"));
  }

  @Test
  void aDeadlineBelowMinUsefulNeverTouchesTheOrigin() throws Exception {
    TestOrigin o = fx.testOrigin();
    ProxyServer p = proxyTo(o.address()).trustingLoopback().start();
    HttpResponse<String> r =
        fx.get(p.port(), "/x", "Parapet-Deadline", "60"); // 60 - 50 reserve < 20 ms
    assertThat(r.statusCode()).isEqualTo(504);
    assertThat(r.headers().firstValue("Proxy-Status"))
        .hasValueSatisfying(
            v -> assertThat(v).contains("error=http_response_timeout", "below min_useful"));
    assertThat(o.calls.get()).isZero();
    // a usable incoming deadline shrinks by the reserve on its way on
    assertThat(fx.get(p.port(), "/x", "Parapet-Deadline", "1000").statusCode()).isEqualTo(200);
    long forwarded = Long.parseLong(o.seenHeaders.get(0).get("Parapet-deadline").get(0));
    assertThat(forwarded).isBetween(0L, 950L);
    // a malformed one is ignored: the route timeout applies
    assertThat(fx.get(p.port(), "/x", "Parapet-Deadline", "-5").statusCode()).isEqualTo(200);
  }

  @Test
  void smugglingAndOversizedHeadsAreRefusedAndNothingIsForwarded() throws Exception {
    TestOrigin o = fx.testOrigin();
    ProxyServer p = proxyTo(o.address()).start();
    String bigHeader = "X-Big: " + "a".repeat(40 * 1024) + "\r\n";
    StringBuilder manyFields = new StringBuilder();
    for (int i = 0; i < 120; i++) {
      manyFields.append("X-F").append(i).append(": v\r\n");
    }
    List<String> hostile =
        List.of(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nhello",
            "GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n" + bigHeader + "\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n" + manyFields + "\r\n",
            "GET /" + "a".repeat(9_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n");
    for (String request : hostile) {
      String answer = raw(p.port(), request);
      assertThat(answer)
          .as(request.substring(0, Math.min(60, request.length())))
          .startsWith("HTTP/1.1 400");
      assertThat(answer).contains("Proxy-Status: edge-test; error=http_request_error");
    }
    assertThat(o.calls.get()).isZero();
  }

  @Test
  void aBodyThatTurnsMalformedIsRefusedAndNeverForwardedAsComplete() throws Exception {
    TestOrigin o = fx.testOrigin();
    ProxyServer p = proxyTo(o.address()).start();
    // The head and the first chunk are fine and may already be on their way; the next chunk size
    // is not a number. The origin must not be handed "hello" as a whole body.
    String answer =
        raw(
            p.port(),
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nhello\r\nZZ\r\nmore\r\n0\r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 400");
    assertThat(answer).contains("error=http_request_error");
    assertThat(o.seenBodies).noneMatch(b -> new String(b, StandardCharsets.UTF_8).equals("hello"));
  }

  @Test
  void bodiesOverTheLimitGet413() throws Exception {
    TestOrigin o = fx.testOrigin();
    ProxyServer p = proxyTo(o.address()).settings(s -> s.withMaxBodyBytes(1_000)).start();
    String declared = raw(p.port(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n");
    assertThat(declared).startsWith("HTTP/1.1 413");
    String chunked =
        raw(
            p.port(),
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n"
                + "b".repeat(2048)
                + "\r\n0\r\n\r\n");
    assertThat(chunked).startsWith("HTTP/1.1 413");
  }

  @Test
  void requestBodiesStreamThrough() throws Exception {
    TestOrigin o = fx.testOrigin();
    ProxyServer p = proxyTo(o.address(), Duration.ofSeconds(5)).start();
    byte[] body = new byte[1 << 20];
    new java.util.Random(1).nextBytes(body);
    HttpResponse<String> r =
        fx.send(request(p.port(), "/upload").POST(HttpRequest.BodyPublishers.ofByteArray(body)));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(o.seenBodies.get(0)).isEqualTo(body);
  }

  @Test
  void slowClientsGet408() throws Exception {
    TestOrigin o = fx.testOrigin();
    ProxyServer p =
        proxyTo(o.address()).settings(s -> s.withHeaderTimeout(Duration.ofMillis(300))).start();
    String answer = raw(p.port(), "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    assertThat(answer).startsWith("HTTP/1.1 408");
    assertThat(o.calls.get()).isZero();
  }

  /**
   * An origin that answers each request of a connection with {@code response}, byte for byte, and
   * closes the connection after it when {@code close}.
   */
  private InetSocketAddress scriptedOrigin(String response, boolean close) throws IOException {
    ServerSocket server =
        fx.closeLater(new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress()));
    Thread t =
        new Thread(() -> {
          while (!server.isClosed()) {
            try {
              Socket s = server.accept();
              Thread.ofVirtual().start(() -> answer(s, response, close));
            } catch (IOException e) {
              return; // the end of the test
            }
          }
        });
    t.setDaemon(true);
    t.start();
    return new InetSocketAddress("127.0.0.1", server.getLocalPort());
  }

  private static void answer(Socket s, String response, boolean close) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      int matched = 0;
      int b;
      while ((b = in.read()) >= 0) {
        matched = b == "\r\n\r\n".charAt(matched) ? matched + 1 : (b == '\r' ? 1 : 0);
        if (matched == 4) {
          matched = 0;
          out.write(response.getBytes(StandardCharsets.ISO_8859_1));
          out.flush();
          if (close) {
            return;
          }
        }
      }
    } catch (IOException e) {
      // the proxy closed the connection
    }
  }

  @Test
  void anEarlyHintBeforeTheResponseIsForwardedAndTheResponsePassesWithItsFieldsAsSent()
      throws Exception {
    ProxyServer p =
        proxyTo(
                scriptedOrigin(
                    "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
                        + "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nX-Odd-CASE: v\r\n"
                        + "Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nContent-Length: 2\r\n\r\nhi",
                    false))
            .start();
    for (int i = 0; i < 2; i++) { // the second on the same origin connection
      String both = raw(p.port(), "GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
      assertThat(both).startsWith("HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n");
      String r = both.substring(both.indexOf("\r\n\r\n") + 4);
      assertThat(r).startsWith("HTTP/1.1 200 OK\r\n").endsWith("\r\n\r\nhi");
      assertThat(r)
          .contains("\r\ncontent-type: text/plain\r\nX-Odd-CASE: v\r\n")
          .doesNotContain("X-Hop")
          .doesNotContain("103")
          .doesNotContain("keep-alive");
      assertThat(r.toLowerCase(java.util.Locale.ROOT)).contains("\r\nvia: 1.1 edge-test\r\n");
    }
  }

  @Test
  void chunkedAndCloseDelimitedOriginBodiesReachTheClientWhole() throws Exception {
    ProxyServer chunked =
        proxyTo(
                scriptedOrigin(
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
                    false))
            .start();
    HttpResponse<String> r = fx.get(chunked.port(), "/x");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("hello world");
    ProxyServer untilClose =
        proxyTo(scriptedOrigin("HTTP/1.0 200 OK\r\nServer: old\r\n\r\nuntil the end", true))
            .start();
    r = fx.get(untilClose.port(), "/x");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("until the end");
    assertThat(r.headers().firstValue("Server")).hasValue("old");
  }

  @Test
  void anOriginResponseWithLengthAndChunkedFramingIs502() throws Exception {
    ProxyServer p =
        proxyTo(
                scriptedOrigin(
                    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled",
                    false))
            .start();
    HttpResponse<String> r = fx.get(p.port(), "/x");
    assertThat(r.statusCode()).isEqualTo(502);
    assertThat(r.headers().firstValue("Proxy-Status"))
        .hasValueSatisfying(v -> assertThat(v).contains("error=http_protocol_error"));
    assertThat(r.body()).doesNotContain("smuggled");
  }

  @Test
  void garbageFromTheOriginIs502AndCountsAgainstIt() throws Exception {
    ServerSocket garbage =
        fx.closeLater(new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress()));
    Thread t =
        new Thread(() -> {
          while (!garbage.isClosed()) {
            try (Socket s = garbage.accept()) {
              s.getInputStream().read(new byte[4096]);
              s.getOutputStream()
                  .write("NOT HTTP AT ALL\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
              s.getOutputStream().flush();
            } catch (IOException e) {
              return;
            }
          }
        });
    t.setDaemon(true);
    t.start();
    ProxyServer p = proxyTo(new InetSocketAddress("127.0.0.1", garbage.getLocalPort())).start();
    HttpResponse<String> r = fx.get(p.port(), "/x");
    assertThat(r.statusCode()).isEqualTo(502);
    assertThat(r.headers().firstValue("Proxy-Status"))
        .hasValueSatisfying(v -> assertThat(v).contains("error=http_protocol_error"));
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() ->
            assertThat(
                    p.breakers()
                        .find(BreakerKey.of(Scope.ROUTE, "api"))
                        .snapshot(System.nanoTime())
                        .failureRate())
                .isEqualTo(1.0));
  }

  @Test
  void aLoopIsDetectedThroughVia() throws Exception {
    TestOrigin o = fx.testOrigin();
    ProxyServer p = proxyTo(o.address()).start();
    HttpResponse<String> r = fx.get(p.port(), "/x", "Via", "1.1 shield-1, 1.1 edge-test");
    assertThat(r.statusCode()).isEqualTo(508);
    assertThat(o.calls.get()).isZero();
  }
}
