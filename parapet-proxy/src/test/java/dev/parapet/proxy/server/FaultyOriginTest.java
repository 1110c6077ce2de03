package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.proxy.faultorigin.Behaviour;
import dev.parapet.proxy.faultorigin.FaultOrigin;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.testing.ProxyFixture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The proxy against `parapet origin` misbehaving: resets, hangs, and shadow mode. */
class FaultyOriginTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();
  private FaultOrigin origin;
  private ProxyServer proxy;

  private void start(Behaviour behaviour, BreakerPolicy policy) throws Exception {
    origin = fx.faultOrigin(FaultPlan.of(behaviour));
    proxy =
        fx.proxy()
            .name("edge-faults")
            .threads(1)
            .routes(route("api", "/", "api"))
            .origins(
                pool("api", new InetSocketAddress("127.0.0.1", origin.port()))
                    .timeout(Duration.ofMillis(300))
                    .breaker(policy)
                    .build())
            .start();
  }

  private HttpResponse<String> get() throws IOException, InterruptedException {
    return fx.get(proxy.port(), "/x");
  }

  private CircuitBreaker breaker() {
    return proxy.breakers().find(BreakerKey.of(Scope.ROUTE, "api"));
  }

  @Test
  void aResetMidBodyTruncatesTheResponseCountsAgainstTheOriginAndFreesTheConnection()
      throws Exception {
    start(
        Behaviour.builder().bodySize(64 * 1024).midBodyResetRate(1.0).build(),
        BreakerPolicy.defaults());
    // the head was already sent: the only honest end is a truncated body (the client sees an error)
    assertThatThrownBy(this::get).isInstanceOf(IOException.class);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> {
          assertThat(breaker().snapshot(System.nanoTime()).failureRate()).isEqualTo(1.0);
          assertThat(proxy.origins().get("api").hosts().get(0).openConnections()).isZero();
          assertThat(proxy.origins().get("api").inFlight()).isZero();
        });
  }

  @Test
  void aHangingOriginGets504AndItsConnectionIsClosed() throws Exception {
    start(Behaviour.builder().hangRate(1.0).build(), BreakerPolicy.defaults());
    HttpResponse<String> r = get();
    assertThat(r.statusCode()).isEqualTo(504);
    assertThat(r.headers().firstValue("Proxy-Status"))
        .hasValueSatisfying(v -> assertThat(v).contains("error=http_response_timeout"));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> assertThat(proxy.origins().get("api").hosts().get(0).openConnections()).isZero());
  }

  @Test
  void shadowModeDecidesButNeverRejects() throws Exception {
    BreakerPolicy shadow = BreakerPolicy.builder().minRequests(10).mode(Mode.SHADOW).build();
    start(Behaviour.builder().errorRate(1.0).errorStatus(503).build(), shadow);
    for (int i = 0; i < 30; i++) {
      assertThat(get().statusCode()).isEqualTo(503); // the origin's own 503s, every time
    }
    assertThat(breaker().state()).isEqualTo(State.OPEN); // it would have opened...
    assertThat(breaker().shadowRejectedCount()).isEqualTo(20); // ...and rejected these
    assertThat(breaker().rejectedCount()).isZero();
    assertThat(origin.stats().requests()).isEqualTo(30); // but every request reached the origin
  }
}
