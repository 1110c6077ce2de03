package dev.parapet.proxy.metrics;

import static dev.parapet.proxy.testing.ProxyFixture.ADMIN_TOKEN;
import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.outlier.OutlierConfig;
import dev.parapet.core.time.ManualTicker;
import dev.parapet.proxy.admin.AdminServer;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.testing.PathOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.upstream.HostSelection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The metrics an operator pages on, read from a live proxy's {@code GET /metrics}: how long a
 * breaker has kept traffic away and how often it opens, whether it flaps, each route's requests in
 * flight, the share of an origin's hosts ejected, and how long connects to an origin take.
 */
class OperatorMetricsTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private static final String BREAKER = "route:api";

  private Scrape scrape(AdminServer admin) throws Exception {
    HttpResponse<String> r = fx.get(admin.port(), "/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    return new Scrape(r.body());
  }

  private void breakerCommand(AdminServer admin, String command) throws Exception {
    assertThat(
            fx.call(admin, "POST", "/admin/breakers/route%3Aapi/" + command, ADMIN_TOKEN)
                .statusCode())
        .isEqualTo(200);
  }

  private static InetSocketAddress closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return new InetSocketAddress("127.0.0.1", s.getLocalPort());
    }
  }

  @Test
  void anOpenBreakerReportsHowLongItHasStoppedTrafficAndHowOftenItOpened() throws Exception {
    // Near the wrap-around of nanoTime: elapsed time is measured by subtraction.
    ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - Duration.ofSeconds(30).toNanos());
    BreakerPolicy policy =
        BreakerPolicy.builder()
            .minRequests(5)
            .open(Duration.ofSeconds(30), Duration.ofMinutes(5), 0.0)
            .flapping(1, Duration.ofHours(1))
            .build();
    ProxyServer p =
        fx.proxy()
            .ticker(ticker)
            .routes(route("api", "/", "api"))
            .origins(pool("api", closedPort()).breaker(policy).build())
            .start();
    AdminServer admin = fx.admin(p, ticker);
    String open = "parapet_breaker_open_seconds{breaker=\"" + BREAKER + "\"}";
    String opens = "parapet_breaker_opens_total{breaker=\"" + BREAKER + "\"}";
    String flapping = "parapet_breaker_flapping{breaker=\"" + BREAKER + "\"}";

    Scrape before = scrape(admin);
    assertThat(before.value(open)).isZero();
    assertThat(before.value(opens)).isZero();
    assertThat(before.value(flapping)).isZero();

    // Refused connects until the breaker opens: from then on it answers 503 itself.
    for (int i = 0; i < 20 && breakerState(p) != State.OPEN; i++) {
      fx.get(p.port(), "/x");
    }
    assertThat(breakerState(p)).isEqualTo(State.OPEN);
    ticker.advance(Duration.ofSeconds(45)); // past the open time, but nothing has probed yet
    Scrape opened = scrape(admin);
    assertThat(opened.value(open)).isEqualTo(45.0);
    assertThat(opened.value(opens)).isEqualTo(1.0);
    assertThat(opened.value(flapping)).isZero();

    // An operator closes it: traffic flows, the gauge is back to 0.
    breakerCommand(admin, "close");
    assertThat(scrape(admin).value(open)).isZero();

    // A second opening within the hour crosses this policy's flapping threshold (1).
    breakerCommand(admin, "open");
    ticker.advance(Duration.ofSeconds(301));
    Scrape flapped = scrape(admin);
    assertThat(flapped.value(open)).isEqualTo(301.0);
    assertThat(flapped.value(opens)).isEqualTo(2.0);
    assertThat(flapped.value(flapping)).isEqualTo(1.0);
  }

  private static State breakerState(ProxyServer p) {
    return p.breakers().find(BreakerKey.of(Scope.ROUTE, "api")).state();
  }

  @Test
  void eachRouteCountsItsRequestsInFlightUntilTheyAreAnswered() throws Exception {
    PathOrigin slow = fx.pathOrigin("slow");
    PathOrigin quick = fx.pathOrigin("quick");
    slow.hold = true;
    ProxyServer p =
        fx.proxy()
            .routes(route("slow", "/slow/", "slow"), route("quick", "/", "quick"))
            .origins(
                pool("slow", slow.address()).maxRequests(50).build(),
                pool("quick", quick.address()).build())
            .start();
    AdminServer admin = fx.admin(p);

    CompletableFuture<HttpResponse<String>> a = fx.sendAsync(p.port(), "/slow/a");
    CompletableFuture<HttpResponse<String>> b =
        fx.sendAsyncOnNewConnection(ProxyFixture.request(p.port(), "/slow/b"));
    assertThat(fx.get(p.port(), "/fast").statusCode()).isEqualTo(200);
    await().atMost(Duration.ofSeconds(30)).until(() -> slow.held.get() == 2);

    Scrape held = scrape(admin);
    assertThat(held.value("parapet_route_inflight{route=\"slow\"}")).isEqualTo(2.0);
    assertThat(held.value("parapet_route_inflight{route=\"quick\"}")).isZero();
    assertThat(held.value("parapet_origin_inflight{origin=\"slow\"}")).isEqualTo(2.0);
    assertThat(held.value("parapet_origin_max_requests{origin=\"slow\"}")).isEqualTo(50.0);

    slow.releaseHeld();
    assertThat(a.get().statusCode()).isEqualTo(200);
    assertThat(b.get().statusCode()).isEqualTo(200);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> scrape(admin).value("parapet_route_inflight{route=\"slow\"}") == 0.0);
    // A request that matched no route is in no route's gauge, and an answered one leaves it.
    assertThat(fx.get(p.port(), "/quick").statusCode()).isEqualTo(200);
    assertThat(scrape(admin).value("parapet_route_inflight{route=\"quick\"}")).isZero();
  }

  @Test
  void theShareOfEjectedHostsFollowsHealthChecks() throws Exception {
    PathOrigin good = fx.pathOrigin("good");
    PathOrigin bad = fx.pathOrigin("bad");
    bad.healthStatus.set(500);
    HostSelection selection =
        new HostSelection(
            "round_robin",
            OutlierConfig.defaults(),
            new HostSelection.HealthCheck(
                PathOrigin.HEALTH, Duration.ofMillis(50), Duration.ofSeconds(2), 2, 2),
            Duration.ZERO);
    ProxyServer p =
        fx.proxy()
            .routes(route("api", "/", "api"))
            .origins(
                pool("api", List.of(good.address(), bad.address()))
                    .build()
                    .withSelection(selection))
            .start();
    AdminServer admin = fx.admin(p);

    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> scrape(admin).value("parapet_ejected_share{origin=\"api\"}") == 0.5);
    Scrape s = scrape(admin);
    assertThat(s.value("parapet_origin_hosts{origin=\"api\"}")).isEqualTo(2.0);
    assertThat(s.value("parapet_ejected_hosts{origin=\"api\"}")).isEqualTo(1.0);

    bad.healthStatus.set(200);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> scrape(admin).value("parapet_ejected_share{origin=\"api\"}") == 0.0);
  }

  @Test
  void connectsToAnOriginAreTimed() throws Exception {
    PathOrigin origin = fx.pathOrigin("api");
    ProxyServer p =
        fx.proxy()
            .threads(1)
            .routes(route("api", "/", "api"))
            .origins(pool("api", origin.address()).build())
            .start();
    AdminServer admin = fx.admin(p);
    String count = "parapet_origin_connect_duration_seconds_count{origin=\"api\"}";
    String sum = "parapet_origin_connect_duration_seconds_sum{origin=\"api\"}";

    assertThat(scrape(admin).value(count)).isZero();
    assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200);
    Scrape s = scrape(admin);
    assertThat(s.value(count)).isEqualTo(1.0);
    assertThat(s.value(sum)).isPositive();
    assertThat(s.names()).contains("parapet_origin_connect_duration_seconds_bucket");
  }

  @Test
  void originStatusesAreCountedByClassWhateverTheBreakerCounts() throws Exception {
    PathOrigin origin = fx.pathOrigin("api");
    ProxyServer p =
        fx.proxy()
            .routes(route("api", "/", "api"))
            .origins(pool("api", origin.address()).build())
            .start();
    AdminServer admin = fx.admin(p);
    assertThat(fx.get(p.port(), "/ok").statusCode()).isEqualTo(200);
    origin.status.set(501); // not among the default failure statuses: the breaker ignores it
    assertThat(fx.get(p.port(), "/broken").statusCode()).isEqualTo(501);

    Scrape s = scrape(admin);
    assertThat(s.value("parapet_origin_responses_total{code=\"2xx\",route=\"api\"}"))
        .isEqualTo(1.0);
    assertThat(s.value("parapet_origin_responses_total{code=\"5xx\",route=\"api\"}"))
        .isEqualTo(1.0);
    assertThat(s.value("parapet_origin_responses_total{code=\"4xx\",route=\"api\"}")).isZero();
    assertThat(s.value("parapet_requests_total{outcome=\"failure_status\",route=\"api\"}"))
        .isZero();
  }
}
