package dev.parapet.proxy.admin;

import static dev.parapet.proxy.testing.ProxyFixture.ADMIN_TOKEN;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestOrigin;
import dev.parapet.proxy.upstream.OriginSettings;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class AdminServerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();
  private TestOrigin origin;
  private ProxyServer proxy;
  private AdminServer admin;

  @BeforeEach
  void start() throws Exception {
    origin = fx.testOrigin();
    proxy =
        fx.proxy()
            .name("edge-admin")
            .threads(1)
            .routes(route("api", "/api/", "api"))
            .origins(OriginSettings.defaults("api", List.of(origin.address())))
            .start();
    admin = fx.admin(proxy);
  }

  private HttpResponse<String> call(String method, String path, String token) throws Exception {
    return fx.call(admin, method, path, token);
  }

  private HttpResponse<String> proxied(String path) throws Exception {
    return fx.get(proxy.port(), path);
  }

  @Test
  void healthReadinessAndMetrics() throws Exception {
    assertThat(call("GET", "/healthz", null).statusCode()).isEqualTo(200);
    assertThat(call("GET", "/readyz", null).statusCode()).isEqualTo(503);
    admin.ready(true);
    assertThat(call("GET", "/readyz", null).statusCode()).isEqualTo(200);
    assertThat(proxied("/api/x").statusCode()).isEqualTo(200);
    assertThat(proxied("/nowhere").statusCode()).isEqualTo(404);
    String metrics = call("GET", "/metrics", null).body();
    assertThat(metrics)
        .contains("parapet_requests_total{outcome=\"success\",route=\"api\"} 1.0")
        .contains("parapet_requests_total{outcome=\"no_route\",route=\"none\"} 1.0")
        .contains("parapet_origin_attempts_total{origin=\"api\",result=\"success\"} 1.0")
        .contains("parapet_local_rejections_total{reason=\"no_route\"} 1.0")
        .contains("parapet_breaker_state{breaker=\"route:api\"} 0.0")
        .contains("parapet_request_duration_seconds_bucket")
        .contains("parapet_time_to_open_seconds_count 0\n");
  }

  @Test
  void breakersAreListedAndChangedOnlyWithTheToken() throws Exception {
    JsonNode list = JSON.readTree(call("GET", "/admin/breakers", null).body());
    assertThat(list).hasSize(1);
    assertThat(list.get(0).get("key").asText()).isEqualTo("route:api");
    assertThat(list.get(0).get("state").asText()).isEqualTo("CLOSED");

    String open = "/admin/breakers/route%3Aapi/open";
    assertThat(call("POST", open, null).statusCode()).isEqualTo(401);
    assertThat(call("POST", open, "wrong").statusCode()).isEqualTo(401);
    HttpResponse<String> ok = call("POST", open, ADMIN_TOKEN);
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(ok.body()).get("state").asText()).isEqualTo("FORCED_OPEN");
    HttpResponse<String> rejected = proxied("/api/x");
    assertThat(rejected.statusCode()).isEqualTo(503);
    assertThat(rejected.headers().firstValue("Proxy-Status"))
        .hasValueSatisfying(v -> assertThat(v).contains("breaker open"));
    assertThat(origin.calls.get()).isZero();

    assertThat(call("POST", "/admin/breakers/route%3Aapi/close", ADMIN_TOKEN).statusCode())
        .isEqualTo(200);
    assertThat(proxy.breakers().find(BreakerKey.of(Scope.ROUTE, "api")).state())
        .isEqualTo(State.CLOSED);
    assertThat(call("POST", "/admin/breakers/route%3Aapi/shadow", ADMIN_TOKEN).statusCode())
        .isEqualTo(200);
    assertThat(proxy.breakers().find(BreakerKey.of(Scope.ROUTE, "api")).mode())
        .isEqualTo(Mode.SHADOW);
    assertThat(call("POST", "/admin/breakers/route%3Aapi/explode", ADMIN_TOKEN).statusCode())
        .isEqualTo(404);
    assertThat(call("POST", "/admin/breakers/route%3Anope/open", ADMIN_TOKEN).statusCode())
        .isEqualTo(404);
    assertThat(proxied("/api/x").statusCode()).isEqualTo(200);
  }

  @Test
  void originsShowTheirPools() throws Exception {
    proxied("/api/x");
    JsonNode origins = JSON.readTree(call("GET", "/admin/origins", null).body());
    assertThat(origins.get(0).get("name").asText()).isEqualTo("api");
    assertThat(origins.get(0).get("hosts").get(0).get("address").asText())
        .isEqualTo("127.0.0.1:" + origin.port());
  }

  @Test
  void withoutATokenChangesAreRefusedAndOffLoopbackIsRefusedAtStart() throws Exception {
    try (AdminServer tokenless =
        new AdminServer(
                new InetSocketAddress("127.0.0.1", 0),
                AdminAccess.withToken(null),
                proxy,
                Ticker.system())
            .start()) {
      HttpResponse<String> r = fx.call(tokenless, "POST", "/admin/breakers/route%3Aapi/open", null);
      assertThat(r.statusCode()).isEqualTo(401);
      assertThat(r.body()).contains("admin.token_file is not configured");
    }
    assertThatThrownBy(() ->
            new AdminServer(
                new InetSocketAddress("0.0.0.0", 0),
                AdminAccess.withToken(null),
                proxy,
                Ticker.system()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("admin.listen")
        .hasMessageContaining("needs a token");
  }
}
