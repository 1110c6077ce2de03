package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.raw;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.retry.RetryOn;
import dev.parapet.proxy.config.HedgeConfig;
import dev.parapet.proxy.config.RetryConfig;
import dev.parapet.proxy.testing.LoopbackOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.upstream.OriginSettings;
import java.io.IOException;
import java.io.OutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A connection's messages share one set of fields and head bytes once each is over ({@code
 * HeaderList.recycle}): over real sockets, with one event loop (so every request reuses the one
 * origin connection), each request reaches the origin with its own fields and each response the
 * client with its own, whether requests come one after another, pipelined, or hedged (a losing
 * attempt still at the origin when its request was answered).
 */
class FieldReuseProxyTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  /** An origin that records each call's path and tag, and answers them back in its body. */
  static final class TagOrigin extends LoopbackOrigin {
    final List<String> seen = new CopyOnWriteArrayList<>();
    final AtomicInteger calls = new AtomicInteger();
    final long slowEvery;

    /** Every {@code slowEvery}-th call (0: none) answers after 2 s. */
    TagOrigin(long slowEvery) throws IOException {
      this.slowEvery = slowEvery;
      start();
    }

    @Override
    protected void handle(HttpExchange ex) throws IOException {
      int n = calls.getAndIncrement();
      readBody(ex);
      String call =
          ex.getRequestURI()
              + " tag="
              + ex.getRequestHeaders().getFirst("X-Tag")
              + " host="
              + ex.getRequestHeaders().getFirst("Host")
              + " id="
              + ex.getRequestHeaders().getFirst("X-Request-Id");
      seen.add(call);
      if (slowEvery > 0 && n % slowEvery == 0) {
        pause(2000);
      }
      byte[] body = call.getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().add("X-Echo-Tag", ex.getRequestHeaders().getFirst("X-Tag"));
      try {
        ex.sendResponseHeaders(200, body.length);
        try (OutputStream out = ex.getResponseBody()) {
          out.write(body);
        }
      } catch (IOException gone) {
        // the proxy cancelled this call (a hedge loser): fine
      }
    }
  }

  /** Tag {@code i}: lengths that go up and down, so a head is longer or shorter than the last. */
  private static String tag(int i) {
    return Integer.toString(i).repeat(1 + (i * 37) % 150);
  }

  private static OriginSettings pool(TagOrigin o, HedgeConfig hedge) {
    RetryConfig noRetry =
        new RetryConfig(
            1,
            new RetryOn(true, false, List.of()),
            new RetryConfig.Budget(0.2, 5),
            new RetryConfig.Backoff(Duration.ofMillis(1), Duration.ofMillis(5)));
    return ProxyFixture.pool("o", o.address())
        .breaker(BreakerPolicy.builder().minRequests(1000).build())
        .build()
        .withTraffic(noRetry, hedge, null);
  }

  @Test
  void pipelinedRequestsReachTheOriginAndTheClientWithTheirOwnFields() throws Exception {
    TagOrigin o = fx.closeLater(new TagOrigin(0));
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(pool(o, HedgeConfig.OFF))
            .threads(1)
            .start();
    int n = 16;
    StringBuilder pipelined = new StringBuilder();
    for (int i = 0; i < n; i++) {
      pipelined.append("GET /p").append(i).append("/ HTTP/1.1\r\nHost: h").append(i);
      pipelined.append(".example\r\nX-Tag: ").append(tag(i)).append("\r\n");
      pipelined.append(i == n - 1 ? "Connection: close\r\n\r\n" : "\r\n");
    }
    // Twice: the second connection's requests come after the first's fields went back.
    for (int round = 0; round < 2; round++) {
      List<String> bodies = responses(raw(p.port(), pipelined.toString()), n);
      for (int i = 0; i < n; i++) {
        assertThat(bodies.get(i)).startsWith("/p" + i + "/ tag=" + tag(i) + " host=h" + i + ".");
      }
    }
    assertThat(o.seen).hasSize(2 * n);
    List<String> ids = new ArrayList<>();
    for (int k = 0; k < 2 * n; k++) {
      int i = k % n;
      String call = o.seen.get(k);
      assertThat(call).startsWith("/p" + i + "/ tag=" + tag(i) + " host=h" + i + ".example id=");
      ids.add(call.substring(call.indexOf(" id=") + 4));
    }
    assertThat(ids).doesNotHaveDuplicates().allMatch(id -> id.matches("[0-9a-f]{16}"));
  }

  @Test
  void requestsAfterAHedgedOneKeepTheirOwnFieldsAtTheOriginTheLoserIncluded() throws Exception {
    TagOrigin o = fx.closeLater(new TagOrigin(2)); // calls 0, 2, 4, ... are slow: hedged
    HedgeConfig hedge =
        new HedgeConfig(
            true, new HedgeConfig.Delay.Fixed(Duration.ofMillis(50)), Duration.ofMillis(20), 1.0);
    ProxyServer p =
        fx.proxy().routes(route("r", "/", "o")).origins(pool(o, hedge)).threads(1).start();
    int n = 6;
    for (int i = 0; i < n; i++) {
      HttpResponse<String> r = fx.get(p.port(), "/h" + i + "/", "X-Tag", tag(i));
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).startsWith("/h" + i + "/ tag=" + tag(i) + " host=");
      assertThat(r.headers().firstValue("X-Echo-Tag")).hasValue(tag(i));
    }
    assertThat(o.calls.get()).isGreaterThan(n); // some were hedged
    for (String call : o.seen) { // every call, the slow losers too, carried its own request's tag
      int i = Integer.parseInt(call.substring(2, call.indexOf('/', 1)));
      assertThat(call).startsWith("/h" + i + "/ tag=" + tag(i) + " host=");
    }
  }

  /**
   * The bodies of the {@code n} responses in {@code answer}, in order, each framed by its length.
   */
  private static List<String> responses(String answer, int n) {
    List<String> bodies = new ArrayList<>();
    int at = 0;
    for (int i = 0; i < n; i++) {
      int headEnd = answer.indexOf("\r\n\r\n", at);
      assertThat(headEnd).as("response %d's head in %s", i, answer).isPositive();
      String head = answer.substring(at, headEnd);
      assertThat(head).startsWith("HTTP/1.1 200 ");
      int length = -1;
      for (String line : head.split("\r\n")) {
        if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
          length = Integer.parseInt(line.substring(15).trim());
        }
      }
      assertThat(length).as("response %d's Content-Length", i).isNotNegative();
      bodies.add(answer.substring(headEnd + 4, headEnd + 4 + length));
      at = headEnd + 4 + length;
    }
    assertThat(at).isEqualTo(answer.length());
    return bodies;
  }
}
