package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.parapet.proxy.testing.PathOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import java.net.ConnectException;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What a stop does before it closes: no new connections, requests in flight finish. */
class DrainTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  @Test
  void drainRefusesNewConnectionsAndWaitsForRequestsInFlight() throws Exception {
    PathOrigin origin = fx.pathOrigin("api");
    origin.hold = true;
    ProxyServer p =
        fx.proxy()
            .routes(route("api", "/", "api"))
            .origins(pool("api", origin.address()).build())
            .start();
    int port = p.port();
    CompletableFuture<HttpResponse<String>> held = fx.sendAsync(port, "/slow");
    await().atMost(Duration.ofSeconds(30)).until(() -> origin.held.get() == 1);

    CompletableFuture<Long> drained = drainAsync(p);
    // The listener closes first: a new connection is refused while the held request goes on.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() ->
            assertThatThrownBy(() -> new Socket("127.0.0.1", port).close())
                .isInstanceOf(ConnectException.class));
    assertThat(drained).isNotDone();

    origin.releaseHeld();
    assertThat(held.get().statusCode()).isEqualTo(200);
    assertThat(drained.get()).isZero();
  }

  @Test
  void drainGivesUpAfterItsTimeoutAndSaysHowManyAreLeft() throws Exception {
    PathOrigin origin = fx.pathOrigin("api");
    origin.hold = true;
    ProxyServer p =
        fx.proxy()
            .routes(route("api", "/", "api"))
            .origins(pool("api", origin.address()).build())
            .start();
    CompletableFuture<HttpResponse<String>> held = fx.sendAsync(p.port(), "/slow");
    await().atMost(Duration.ofSeconds(30)).until(() -> origin.held.get() == 1);

    assertThat(p.drain(Duration.ZERO)).isEqualTo(1);
    origin.releaseHeld();
    assertThat(held.get().statusCode()).isEqualTo(200);
  }

  @Test
  void drainClosesIdleKeepAliveConnectionsAtOnce() throws Exception {
    PathOrigin origin = fx.pathOrigin("api");
    ProxyServer p =
        fx.proxy()
            .routes(route("api", "/", "api"))
            .origins(pool("api", origin.address()).build())
            .start();
    try (Socket idle = new Socket("127.0.0.1", p.port())) {
      idle.setSoTimeout(30_000);
      String first = Http2DrainTest.exchange(idle, "/first");
      assertThat(first).startsWith("HTTP/1.1 200").doesNotContainIgnoringCase("connection: close");

      origin.hold = true; // a request in flight keeps the drain going
      CompletableFuture<HttpResponse<String>> held = fx.sendAsync(p.port(), "/slow");
      await().atMost(Duration.ofSeconds(30)).until(() -> origin.held.get() == 1);
      CompletableFuture<Long> drained = drainAsync(p);

      // the idle connection is closed by the proxy while the held request is still going on
      assertThat(idle.getInputStream().read()).isEqualTo(-1);
      assertThat(drained).isNotDone();
      origin.releaseHeld();
      assertThat(held.get().statusCode()).isEqualTo(200);
      assertThat(drained.get()).isZero();
    }
  }

  /** {@code p.drain(60 s)} on another thread. */
  static CompletableFuture<Long> drainAsync(ProxyServer p) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return p.drain(Duration.ofSeconds(60));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
  }
}
