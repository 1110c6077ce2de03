package dev.parapet.proxy.admin;

import static dev.parapet.proxy.testing.ProxyFixture.ADMIN_TOKEN;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.runtime.ProxyRuntime;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestOrigin;
import dev.parapet.proxy.upstream.OriginSettings;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What keeps a web page the operator visits from using the admin API through the browser: {@code
 * Host} must name the listener (DNS rebinding), a change must not come from another origin, and
 * with {@code read_token: required} reads need the token too. Requests are written as bytes on
 * loopback sockets, because HTTP clients will not send a {@code Host} other than the one they
 * connect to, and that is exactly what a rebound browser does.
 */
class AdminAccessTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> READS =
      List.of(
          "/healthz",
          "/readyz",
          "/metrics",
          "/admin/breakers",
          "/admin/origins",
          "/admin/incident",
          "/dashboard",
          "/admin/dashboard.json");
  private static final String OPEN = "/admin/breakers/route%3Aapi/open";

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();
  private ProxyServer proxy;

  @BeforeEach
  void start() throws Exception {
    TestOrigin origin = fx.testOrigin();
    proxy =
        fx.proxy()
            .threads(1)
            .routes(route("api", "/api/", "api"))
            .origins(OriginSettings.defaults("api", List.of(origin.address())))
            .start();
  }

  private AdminServer admin(AdminAccess access) throws InterruptedException {
    AdminServer a =
        fx.closeLater(
            new AdminServer(new InetSocketAddress("127.0.0.1", 0), access, proxy, Ticker.system())
                .start());
    a.ready(true);
    return a;
  }

  /** One request on its own connection; {@code headers} are whole lines such as "Host: x". */
  private static Answer send(AdminServer admin, String method, String path, String... headers)
      throws IOException {
    return send(admin.port(), "HTTP/1.1", method, path, headers);
  }

  private static Answer send(
      int port, String version, String method, String path, String... headers) throws IOException {
    StringBuilder req = new StringBuilder(method + " " + path + " " + version + "\r\n");
    for (String h : headers) {
      req.append(h).append("\r\n");
    }
    req.append("Connection: close\r\n\r\n");
    return Answer.of(ProxyFixture.raw(port, req.toString()));
  }

  private static String host(AdminServer admin) {
    return "Host: 127.0.0.1:" + admin.port();
  }

  private static String bearer(String token) {
    return "Authorization: Bearer " + token;
  }

  private State apiBreaker() {
    return proxy.breakers().find(BreakerKey.of(Scope.ROUTE, "api")).state();
  }

  @Test
  void aRebindingNameIsRefusedOnEveryPathEvenWithTheToken() throws Exception {
    AdminServer admin = admin(AdminAccess.withToken(ADMIN_TOKEN));
    for (String path : READS) {
      for (String name : List.of("attacker.example", "attacker.example:" + admin.port())) {
        Answer a = send(admin, "GET", path, "Host: " + name, bearer(ADMIN_TOKEN));
        assertThat(a.status()).as("GET %s with Host: %s", path, name).isEqualTo(421);
        assertThat(a.header("content-type")).isEqualTo("application/problem+json");
        JsonNode problem = JSON.readTree(a.body());
        assertThat(problem.get("status").asInt()).isEqualTo(421);
        assertThat(problem.get("detail").asText())
            .startsWith("Host : " + name + " (expected: a name of this admin listener;");
        assertThat(a.body()).doesNotContain("parapet_requests_total", "route:api");
      }
    }
    assertThat(send(admin, "POST", OPEN, "Host: attacker.example", bearer(ADMIN_TOKEN)).status())
        .isEqualTo(421);
    // an IP address other than the listener's cannot be this listener either
    assertThat(send(admin, "GET", "/admin/breakers", "Host: 10.1.2.3").status()).isEqualTo(421);
    assertThat(apiBreaker()).isEqualTo(State.CLOSED);
  }

  @Test
  void theListenersOwnNamesAreAcceptedWithOrWithoutAPort() throws Exception {
    AdminServer admin = admin(AdminAccess.withToken(ADMIN_TOKEN));
    int port = admin.port();
    for (String name :
        List.of(
            "127.0.0.1:" + port,
            "127.0.0.1",
            "localhost:" + port,
            "localhost",
            "LocalHost:" + port,
            "localhost.:" + port,
            "[::1]:" + port,
            "[::1]",
            // behind a tunnel such as ssh -L 19901:127.0.0.1:PORT
            "localhost:19901")) {
      Answer a = send(admin, "GET", "/admin/breakers", "Host: " + name);
      assertThat(a.status()).as("Host: %s", name).isEqualTo(200);
      assertThat(JSON.readTree(a.body()).get(0).get("key").asText()).isEqualTo("route:api");
    }
    assertThat(send(admin.port(), "HTTP/1.0", "GET", "/healthz").status())
        .as("HTTP/1.0 without Host")
        .isEqualTo(200);
  }

  @Test
  void aMissingRepeatedOrMalformedHostIsABadRequest() throws Exception {
    AdminServer admin = admin(AdminAccess.withToken(ADMIN_TOKEN));
    Answer missing = send(admin, "GET", "/metrics");
    assertThat(missing.status()).isEqualTo(400);
    assertThat(JSON.readTree(missing.body()).get("detail").asText())
        .isEqualTo("Host : missing (expected: one Host field on HTTP/1.1)");
    assertThat(send(admin, "GET", "/metrics", host(admin), "Host: localhost").status())
        .isEqualTo(400);
    for (String bad : List.of("user@localhost", "localhost/x", "localhost:99999", "a_b.example")) {
      assertThat(send(admin, "GET", "/metrics", "Host: " + bad).status())
          .as("Host: %s", bad)
          .isEqualTo(400);
    }
  }

  @Test
  void configuredHostsAreAcceptedBesideTheDefaults() throws Exception {
    AdminServer admin =
        admin(
            new AdminAccess(ADMIN_TOKEN, List.of("admin.internal", "10.1.2.3", "fd00::5"), false));
    for (String name :
        List.of(
            "admin.internal:" + admin.port(),
            "ADMIN.internal",
            "10.1.2.3:" + admin.port(),
            "[fd00::5]:" + admin.port(),
            "127.0.0.1:" + admin.port())) {
      assertThat(send(admin, "GET", "/metrics", "Host: " + name).status())
          .as("Host: %s", name)
          .isEqualTo(200);
    }
    assertThat(send(admin, "GET", "/metrics", "Host: other.internal").status()).isEqualTo(421);
    assertThat(send(admin, "GET", "/metrics", "Host: evil.admin.internal").status()).isEqualTo(421);
    assertThatThrownBy(() ->
            new AdminServer(
                new InetSocketAddress("127.0.0.1", 0),
                new AdminAccess(ADMIN_TOKEN, List.of("admin.internal:9901"), false),
                proxy,
                Ticker.system()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "admin.hosts : 'admin.internal:9901' (expected: a host name or IP address without a"
                + " port)");
  }

  @Test
  void aWildcardListenerAcceptsAnyAddressButOnlyItsNames() {
    AdminGate gate =
        new AdminGate(
            new InetSocketAddress("0.0.0.0", 9901),
            new AdminAccess(ADMIN_TOKEN, List.of("admin.internal"), false));
    for (String name : List.of("10.1.2.3:9901", "[fd00::5]", "admin.internal", "localhost")) {
      assertThat(gate.check(request("/metrics", name, ADMIN_TOKEN), "/metrics"))
          .as("Host: %s", name)
          .isNull();
    }
    assertThat(gate.check(request("/metrics", "attacker.example", ADMIN_TOKEN), "/metrics"))
        .extracting(r -> r.status().code())
        .isEqualTo(421);
    // off loopback every read needs the token, except the probes
    assertThat(gate.check(request("/metrics", "10.1.2.3", null), "/metrics"))
        .extracting(r -> r.status().code())
        .isEqualTo(401);
    assertThat(gate.check(request("/healthz", "10.1.2.3", null), "/healthz")).isNull();
    assertThat(gate.check(request("/readyz", "10.1.2.3", null), "/readyz")).isNull();
  }

  private static DefaultFullHttpRequest request(String path, String host, @Nullable String token) {
    DefaultFullHttpRequest r =
        new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, path);
    r.headers().set("Host", host);
    if (token != null) {
      r.headers().set("Authorization", "Bearer " + token);
    }
    return r;
  }

  @Test
  void readTokenRequiredGuardsEveryReadButTheProbes() throws Exception {
    AdminServer admin = admin(new AdminAccess(ADMIN_TOKEN, List.of(), true));
    for (String path : READS) {
      boolean probe = path.equals("/healthz") || path.equals("/readyz");
      Answer without = send(admin, "GET", path, host(admin));
      Answer wrong = send(admin, "GET", path, host(admin), bearer("wrong"));
      Answer with = send(admin, "GET", path, host(admin), bearer(ADMIN_TOKEN));
      assertThat(without.status())
          .as("GET %s without the token", path)
          .isEqualTo(probe ? 200 : 401);
      assertThat(wrong.status()).as("GET %s with a wrong token", path).isEqualTo(probe ? 200 : 401);
      assertThat(with.status()).as("GET %s with the token", path).isEqualTo(200);
      if (!probe) {
        assertThat(without.header("www-authenticate")).isEqualTo("Bearer realm=\"parapet-admin\"");
        assertThat(JSON.readTree(without.body()).get("detail").asText())
            .isEqualTo("missing or wrong bearer token");
      }
    }
    AdminServer optional = admin(AdminAccess.withToken(ADMIN_TOKEN));
    assertThat(send(optional, "GET", "/admin/breakers", host(optional)).status())
        .as("read_token: optional on loopback")
        .isEqualTo(200);
  }

  @Test
  void aChangeFromAnotherOriginIsRefusedEvenWithTheToken() throws Exception {
    AdminServer admin = admin(AdminAccess.withToken(ADMIN_TOKEN));
    String self = "http://127.0.0.1:" + admin.port();
    for (String origin :
        List.of(
            "http://attacker.example",
            "http://attacker.example:" + admin.port(),
            "null",
            "http://127.0.0.1:" + (admin.port() == 1 ? 2 : admin.port() - 1),
            "http://localhost:" + admin.port(),
            self + "/path",
            "ftp://127.0.0.1:" + admin.port())) {
      for (String[] call :
          List.of(
              new String[] {"POST", OPEN},
              new String[] {"DELETE", "/admin/incident"},
              new String[] {"POST", "/admin/incident"})) {
        Answer a =
            send(admin, call[0], call[1], host(admin), bearer(ADMIN_TOKEN), "Origin: " + origin);
        assertThat(a.status()).as("%s %s from %s", call[0], call[1], origin).isEqualTo(403);
        assertThat(JSON.readTree(a.body()).get("detail").asText())
            .startsWith("Origin : " + origin + " (expected: none, or this listener's own origin");
        assertThat(a.hasCorsHeaders()).isFalse();
      }
    }
    Answer twoOrigins =
        send(
            admin,
            "POST",
            OPEN,
            host(admin),
            bearer(ADMIN_TOKEN),
            "Origin: " + self,
            "Origin: " + self);
    assertThat(twoOrigins.status()).isEqualTo(403);
    assertThat(apiBreaker()).isEqualTo(State.CLOSED);
    assertThat(proxy.incident().active()).isFalse();

    // a CORS preflight finds no CORS headers, so a browser never sends the change itself
    Answer preflight =
        send(
            admin,
            "OPTIONS",
            OPEN,
            host(admin),
            "Origin: http://attacker.example",
            "Access-Control-Request-Method: POST",
            "Access-Control-Request-Headers: authorization");
    assertThat(preflight.status()).isEqualTo(403);
    assertThat(preflight.hasCorsHeaders()).isFalse();

    // the listener's own page, and tools that send no Origin, may change things
    assertThat(
            send(admin, "POST", OPEN, host(admin), bearer(ADMIN_TOKEN), "Origin: " + self).status())
        .isEqualTo(200);
    assertThat(apiBreaker()).isEqualTo(State.FORCED_OPEN);
    assertThat(
            send(
                    admin,
                    "POST",
                    "/admin/breakers/route%3Aapi/close",
                    host(admin),
                    bearer(ADMIN_TOKEN))
                .status())
        .isEqualTo(200);
    assertThat(apiBreaker()).isEqualTo(State.CLOSED);
    assertThat(
            send(
                    admin,
                    "POST",
                    OPEN,
                    "Host: localhost",
                    bearer(ADMIN_TOKEN),
                    "Origin: http://LOCALHOST:80")
                .status())
        .as("the default port written out")
        .isEqualTo(200);
  }

  @Test
  void readsSendNoCorsHeaders() throws Exception {
    AdminServer admin = admin(AdminAccess.withToken(ADMIN_TOKEN));
    for (String path : READS) {
      Answer a = send(admin, "GET", path, host(admin), "Origin: http://attacker.example");
      assertThat(a.status()).as("GET %s", path).isEqualTo(200);
      assertThat(a.hasCorsHeaders()).as("GET %s", path).isFalse();
    }
  }

  @Test
  void theConfigurationReachesTheListener(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("admin.token"), ADMIN_TOKEN + "\n");
    String yaml =
        """
        listen: 127.0.0.1:0
        admin:
          listen: 127.0.0.1:0
          token_file: admin.token
          hosts: [admin.internal]
          read_token: required
        origins: {api: {hosts: [127.0.0.1:9]}}
        routes: [{origin: api}]
        """;
    ProxyRuntime runtime =
        fx.closeLater(
            ProxyRuntime.start(
                ConfigLoader.parse(yaml, "admin.yaml", dir).config(),
                Ticker.system(),
                RandomSource.seeded(1),
                1));
    int port = runtime.admin().port();
    assertThat(send(port, "HTTP/1.1", "GET", "/metrics", "Host: admin.internal:" + port).status())
        .isEqualTo(401);
    assertThat(
            send(port, "HTTP/1.1", "GET", "/metrics", "Host: admin.internal", bearer(ADMIN_TOKEN))
                .status())
        .isEqualTo(200);
    assertThat(send(port, "HTTP/1.1", "GET", "/healthz", "Host: localhost").status())
        .isEqualTo(200);
    assertThat(
            send(port, "HTTP/1.1", "GET", "/metrics", "Host: attacker.example", bearer(ADMIN_TOKEN))
                .status())
        .isEqualTo(421);
  }

  /** A response as bytes: the status, the header lines, and the body. */
  private record Answer(int status, List<String> headers, String body) {
    static Answer of(String raw) {
      int end = raw.indexOf("\r\n\r\n");
      assertThat(end).as("a whole response head in:%n%s", raw).isPositive();
      List<String> lines = raw.substring(0, end).lines().toList();
      int status = Integer.parseInt(lines.get(0).split(" ")[1]);
      return new Answer(status, lines.subList(1, lines.size()), raw.substring(end + 4));
    }

    @Nullable String header(String name) {
      for (String h : headers) {
        if (h.regionMatches(true, 0, name + ":", 0, name.length() + 1)) {
          return h.substring(name.length() + 1).trim();
        }
      }
      return null;
    }

    boolean hasCorsHeaders() {
      return headers.stream()
          .anyMatch(h -> h.toLowerCase(Locale.ROOT).startsWith("access-control-"));
    }
  }
}
