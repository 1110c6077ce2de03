package dev.parapet.proxy.admin;

import static dev.parapet.proxy.testing.ProxyFixture.ADMIN_TOKEN;
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
import dev.parapet.core.overload.OverloadConfig;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.overload.OverloadResource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.overload.OverloadMonitor;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestOrigin;
import dev.parapet.proxy.upstream.OriginSettings;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Readiness under a forced overload level, and the incident runbook API, over loopback. */
class OverloadAndIncidentTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();
  // Doubles as raw bits: the sampler thread reads what the test writes.
  private final AtomicLong heap = new AtomicLong(Double.doubleToLongBits(0.10));
  private TestOrigin origin;
  private OverloadMonitor overload;
  private ProxyServer proxy;
  private AdminServer admin;

  @BeforeEach
  void start() throws Exception {
    origin = fx.testOrigin();
    overload =
        new OverloadMonitor(
            OverloadConfig.none()
                .with(OverloadResource.HEAP, OverloadLevel.SHED_LOW_PRIORITY, 0.85)
                .with(OverloadResource.HEAP, OverloadLevel.STOP_ACCEPTING, 0.95)
                .withHysteresis(0.05, Duration.ZERO),
            () -> Double.longBitsToDouble(heap.get()),
            () -> Double.NaN,
            Ticker.system(),
            Duration.ofMillis(20),
            Duration.ofMillis(20));
    proxy =
        fx.proxy()
            .name("edge-incident")
            .threads(1)
            .routes(
                route("api", "/api/", "api"),
                new Route(
                    "static",
                    null,
                    "/static/",
                    "api",
                    Duration.ofSeconds(8),
                    BreakerPolicy.builder().failureRate(0.10).build()))
            .origins(OriginSettings.defaults("api", List.of(origin.address())))
            .overload(overload)
            .start();
    admin = fx.admin(proxy);
    admin.ready(true);
  }

  private HttpResponse<String> call(String method, String path, String token) throws Exception {
    return fx.call(admin, method, path, token);
  }

  private void heap(double share) {
    heap.set(Double.doubleToLongBits(share));
  }

  @Test
  void readyzFollowsTheOverloadLevel() throws Exception {
    assertThat(overload.sampleNow()).isEqualTo(OverloadLevel.NONE);
    assertThat(call("GET", "/readyz", null).statusCode()).isEqualTo(200);

    heap(0.90);
    assertThat(overload.sampleNow()).isEqualTo(OverloadLevel.SHED_LOW_PRIORITY);
    assertThat(overload.stopAccepting()).isFalse();
    assertThat(call("GET", "/readyz", null).statusCode()).isEqualTo(200);

    heap(0.97);
    assertThat(overload.sampleNow()).isEqualTo(OverloadLevel.STOP_ACCEPTING);
    assertThat(overload.current()).isEqualTo(OverloadLevel.STOP_ACCEPTING);
    HttpResponse<String> r = call("GET", "/readyz", null);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).contains("not ready");

    heap(0.10);
    assertThat(overload.sampleNow()).isEqualTo(OverloadLevel.NONE);
    assertThat(call("GET", "/readyz", null).statusCode()).isEqualTo(200);
  }

  @Test
  void theSamplingThreadAppliesReadingsOnItsOwn() throws Exception {
    heap(0.99);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> call("GET", "/readyz", null).statusCode() == 503);
    assertThat(overload.reading(OverloadResource.HEAP)).isEqualTo(0.99);
  }

  private double failureRate(String route) {
    CircuitBreaker b = proxy.breakers().find(BreakerKey.of(Scope.ROUTE, route));
    assertThat(b).isNotNull();
    return b.policy().failureRate();
  }

  @Test
  void incidentTightensEveryBreakerAndPrefersStaleUntilDeleted() throws Exception {
    assertThat(failureRate("api")).isEqualTo(0.50);
    assertThat(failureRate("static")).isEqualTo(0.10);
    // An operator already forced one breaker open: the incident must not forget that.
    assertThat(call("POST", "/admin/breakers/route:api/open", ADMIN_TOKEN).statusCode())
        .isEqualTo(200);
    CircuitBreaker forced = proxy.breakers().find(BreakerKey.of(Scope.ROUTE, "api"));

    assertThat(call("POST", "/admin/incident", null).statusCode()).isEqualTo(401);
    assertThat(call("POST", "/admin/incident", "wrong").statusCode()).isEqualTo(401);
    assertThat(proxy.incident().active()).isFalse();

    HttpResponse<String> on = call("POST", "/admin/incident", ADMIN_TOKEN);
    assertThat(on.statusCode()).isEqualTo(200);
    JsonNode body = JSON.readTree(on.body());
    assertThat(body.get("active").asBoolean()).isTrue();
    assertThat(body.get("prefer_stale").asBoolean()).isTrue();
    assertThat(body.get("changed").asBoolean()).isTrue();
    assertThat(body.get("breakers_kept_tripped").asInt()).isEqualTo(1);
    assertThat(proxy.incident().preferStale()).isTrue();
    assertThat(proxy.breakers().find(BreakerKey.of(Scope.ROUTE, "api"))).isSameAs(forced);
    assertThat(forced.state()).isEqualTo(State.FORCED_OPEN);
    assertThat(failureRate("static")).isEqualTo(0.10); // already tighter: kept

    // Declaring it again changes nothing.
    HttpResponse<String> twice = call("POST", "/admin/incident", ADMIN_TOKEN);
    assertThat(twice.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(twice.body()).get("changed").asBoolean()).isFalse();
    JsonNode again = JSON.readTree(call("GET", "/admin/incident", null).body());
    assertThat(again.get("active").asBoolean()).isTrue();
    assertThat(again.get("failure_rate").asDouble()).isEqualTo(0.20);

    assertThat(call("DELETE", "/admin/incident", null).statusCode()).isEqualTo(401);
    assertThat(proxy.incident().active()).isTrue();
    HttpResponse<String> off = call("DELETE", "/admin/incident", ADMIN_TOKEN);
    assertThat(off.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(off.body()).get("active").asBoolean()).isFalse();
    assertThat(proxy.incident().preferStale()).isFalse();
    assertThat(JSON.readTree(call("GET", "/admin/incident", null).body()).get("active").asBoolean())
        .isFalse();
    assertThat(failureRate("static")).isEqualTo(0.10);
  }

  @Test
  void aBreakerKeptTrippedTakesTheIncidentPolicyOnceClosed() throws Exception {
    assertThat(call("POST", "/admin/breakers/route:api/open", ADMIN_TOKEN).statusCode())
        .isEqualTo(200);
    assertThat(call("POST", "/admin/incident", ADMIN_TOKEN).statusCode()).isEqualTo(200);
    assertThat(proxy.reconcileBreakers()).isZero(); // still forced open: keeps its state
    assertThat(failureRate("api")).isEqualTo(0.50);
    assertThat(call("POST", "/admin/breakers/route:api/close", ADMIN_TOKEN).statusCode())
        .isEqualTo(200);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> failureRate("api") == 0.20); // the server's own once-a-second pass
    assertThat(proxy.reconcileBreakers()).isZero();
  }

  @Test
  void aClosedBreakerTakesTheIncidentThresholdAndGetsItsOwnBack() throws Exception {
    assertThat(call("POST", "/admin/incident", ADMIN_TOKEN).statusCode()).isEqualTo(200);
    assertThat(failureRate("api")).isEqualTo(0.20);
    HttpResponse<String> served = fx.get(proxy.port(), "/api/x");
    assertThat(served.statusCode()).isEqualTo(200);
    assertThat(call("DELETE", "/admin/incident", ADMIN_TOKEN).statusCode()).isEqualTo(200);
    assertThat(failureRate("api")).isEqualTo(0.50);
  }
}
