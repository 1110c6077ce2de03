package dev.parapet.proxy.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.flow.ProxySettings;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.testing.TestOrigin;
import dev.parapet.proxy.upstream.OriginSettings;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AdminServerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private TestOrigin origin;
  private ProxyServer proxy;
  private AdminServer admin;

  @BeforeEach
  void start() throws Exception {
    origin = new TestOrigin();
    proxy =
        ProxyServer.builder(
                ProxySettings.defaults("edge-admin", new InetSocketAddress("127.0.0.1", 0)))
            .routes(List.of(new Route("api", null, "/api/", "api", Duration.ofSeconds(8))))
            .origins(List.of(OriginSettings.defaults("api", List.of(origin.address()))))
            .clock(Ticker.system(), RandomSource.seeded(1))
            .threads(1)
            .build()
            .start();
    admin =
        new AdminServer(new InetSocketAddress("127.0.0.1", 0), "s3cret", proxy, Ticker.system())
            .start();
  }

  @AfterEach
  void stop() {
    admin.close();
    proxy.close();
    origin.close();
  }

  private HttpResponse<String> call(String method, String path, String token) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + path))
            .method(method, HttpRequest.BodyPublishers.noBody());
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> proxied(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + proxy.port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
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
    HttpResponse<String> ok = call("POST", open, "s3cret");
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(ok.body()).get("state").asText()).isEqualTo("FORCED_OPEN");
    HttpResponse<String> rejected = proxied("/api/x");
    assertThat(rejected.statusCode()).isEqualTo(503);
    assertThat(rejected.headers().firstValue("Proxy-Status"))
        .hasValueSatisfying(v -> assertThat(v).contains("breaker open"));
    assertThat(origin.calls.get()).isZero();

    assertThat(call("POST", "/admin/breakers/route%3Aapi/close", "s3cret").statusCode())
        .isEqualTo(200);
    assertThat(proxy.breakers().find(BreakerKey.of(Scope.ROUTE, "api")).state())
        .isEqualTo(State.CLOSED);
    assertThat(call("POST", "/admin/breakers/route%3Aapi/shadow", "s3cret").statusCode())
        .isEqualTo(200);
    assertThat(proxy.breakers().find(BreakerKey.of(Scope.ROUTE, "api")).mode())
        .isEqualTo(Mode.SHADOW);
    assertThat(call("POST", "/admin/breakers/route%3Aapi/explode", "s3cret").statusCode())
        .isEqualTo(404);
    assertThat(call("POST", "/admin/breakers/route%3Anope/open", "s3cret").statusCode())
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
        new AdminServer(new InetSocketAddress("127.0.0.1", 0), null, proxy, Ticker.system())
            .start()) {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(
                      URI.create(
                          "http://127.0.0.1:"
                              + tokenless.port()
                              + "/admin/breakers/route%3Aapi/open"))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(401);
      assertThat(r.body()).contains("admin.token_file is not configured");
    }
    assertThatThrownBy(() ->
            new AdminServer(new InetSocketAddress("0.0.0.0", 0), null, proxy, Ticker.system()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("admin.listen")
        .hasMessageContaining("needs a token");
  }
}
