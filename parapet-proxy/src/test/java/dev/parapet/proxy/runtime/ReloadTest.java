package dev.parapet.proxy.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.testing.TestOrigin;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** POST /admin/reload: validate, then swap atomically; unchanged breakers keep their state. */
class ReloadTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  @TempDir Path dir;
  private TestOrigin origin;
  private ProxyRuntime runtime;
  private Path file;
  private int port;
  private int adminPort;

  @BeforeEach
  void start() throws Exception {
    origin = new TestOrigin();
    try (ServerSocket a = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        ServerSocket b = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = a.getLocalPort();
      adminPort = b.getLocalPort();
    }
    Files.writeString(dir.resolve("admin.token"), "t0ken\n");
    file = dir.resolve("parapet.yaml");
    write("", "");
    runtime =
        ProxyRuntime.start(
            ConfigLoader.load(file).config(), file, Ticker.system(), RandomSource.seeded(1), 1);
  }

  @AfterEach
  void stop() {
    runtime.close();
    origin.close();
  }

  private void write(String apiBreaker, String extraRoutes) throws Exception {
    Files.writeString(
        file,
        """
        name: reload-test
        listen: 127.0.0.1:%d
        admin: {listen: 127.0.0.1:%d, token_file: admin.token}
        origins:
          api: {hosts: [127.0.0.1:%d]}
        routes:
          - match: {prefix: /api/}
            origin: api
            %s
        %s
        """
            .formatted(port, adminPort, origin.port(), apiBreaker, extraRoutes));
  }

  private HttpResponse<String> reload(String token) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/admin/reload"))
            .POST(HttpRequest.BodyPublishers.noBody());
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private int get(String path) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private CircuitBreaker apiBreaker() {
    return runtime.proxy().breakers().find(BreakerKey.of(Scope.ROUTE, "*/api/"));
  }

  @Test
  void unchangedBreakersKeepTheirStateAndNewRoutesServe() throws Exception {
    CircuitBreaker before = apiBreaker();
    before.forceOpen(System.nanoTime());
    assertThat(get("/api/x")).isEqualTo(503);
    assertThat(get("/static/x")).isEqualTo(404);

    write("", "  - match: {prefix: /static/}\n    origin: api\n");
    assertThat(reload(null).statusCode()).isEqualTo(401);
    HttpResponse<String> r = reload("t0ken");
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode body = JSON.readTree(r.body());
    assertThat(body.get("applied").asBoolean()).isTrue();
    assertThat(body.get("summary").asText()).contains("2 routes", "1 breakers kept", "1 new");
    assertThat(apiBreaker()).isSameAs(before);
    assertThat(apiBreaker().state()).isEqualTo(State.FORCED_OPEN);
    assertThat(get("/api/x")).isEqualTo(503);
    assertThat(get("/static/x")).isEqualTo(200);

    // a changed policy makes a new breaker
    write("breaker: {failure_rate: 30%}", "");
    assertThat(reload("t0ken").statusCode()).isEqualTo(200);
    assertThat(apiBreaker()).isNotSameAs(before);
    assertThat(apiBreaker().state()).isEqualTo(State.CLOSED);
    assertThat(get("/api/x")).isEqualTo(200);
    assertThat(get("/static/x")).isEqualTo(404);
  }

  @Test
  void anInvalidFileChangesNothingAndSaysWhy() throws Exception {
    write("breaker: {failure_rate: 150%}", "");
    HttpResponse<String> r = reload("t0ken");
    assertThat(r.statusCode()).isEqualTo(400);
    JsonNode body = JSON.readTree(r.body());
    assertThat(body.get("applied").asBoolean()).isFalse();
    assertThat(body.get("errors").get(0).asText()).contains("routes[0].breaker.failure_rate");
    assertThat(get("/api/x")).isEqualTo(200);
  }

  @Test
  void changingTheListenAddressNeedsARestart() throws Exception {
    int other;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      other = s.getLocalPort();
    }
    Files.writeString(
        file, Files.readString(file).replace("127.0.0.1:" + port, "127.0.0.1:" + other));
    HttpResponse<String> r = reload("t0ken");
    assertThat(r.statusCode()).isEqualTo(409);
    assertThat(r.body()).contains("needs a restart");
    assertThat(get("/api/x")).isEqualTo(200);
  }
}
