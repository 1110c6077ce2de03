package dev.parapet.proxy.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.config.ProxyConfig;
import dev.parapet.proxy.testing.TestCertificates;
import dev.parapet.proxy.testing.TestOrigin;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The three example configurations run as a chain on loopback (edge → shield → connector →
 * origins), exactly as written except for the ports, which are moved to free ones, and the edge's
 * certificate, made here as {@code bin/dev-certs} would make it.
 */
class ExampleChainTest {
  private final List<AutoCloseable> running = new ArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private TestOrigin api;
  private TestOrigin statics;
  private int edgePort;
  private int edgeTlsPort;
  private TestCertificates.Ca ca;
  @TempDir Path dir;

  @BeforeEach
  void startChain() throws Exception {
    api = new TestOrigin();
    statics = new TestOrigin();
    running.add(api);
    running.add(statics);
    // edge, shield, connector listeners, their admin listeners, the edge's HTTPS listener
    int[] ports = freePorts(7);
    edgePort = ports[0];
    edgeTlsPort = ports[6];
    ca = TestCertificates.ca("dev CA");
    Files.createDirectories(dir.resolve("certs"));
    ca.issue("edge.test", "localhost").write(dir.resolve("certs"), "edge");
    // Start from the origin side so every tier finds the next one listening.
    start("connector.yaml", ports);
    start("shield.yaml", ports);
    start("edge.yaml", ports);
  }

  @AfterEach
  void stopChain() throws Exception {
    for (int i = running.size() - 1; i >= 0; i--) {
      running.get(i).close();
    }
  }

  private void start(String example, int[] ports) throws Exception {
    String yaml =
        Files.readString(Path.of("..", "examples", example))
            .replace("127.0.0.1:8080", "127.0.0.1:" + ports[0])
            .replace("127.0.0.1:8081", "127.0.0.1:" + ports[1])
            .replace("127.0.0.1:8082", "127.0.0.1:" + ports[2])
            .replace("127.0.0.1:9901", "127.0.0.1:" + ports[3])
            .replace("127.0.0.1:9902", "127.0.0.1:" + ports[4])
            .replace("127.0.0.1:9903", "127.0.0.1:" + ports[5])
            .replace("127.0.0.1:8443", "127.0.0.1:" + ports[6])
            .replace("127.0.0.1:9001", "127.0.0.1:" + api.port())
            .replace("127.0.0.1:9002", "127.0.0.1:" + statics.port());
    ProxyConfig config = ConfigLoader.parse(yaml, example, dir).config();
    running.add(ProxyRuntime.start(config, Ticker.system(), RandomSource.seeded(1), 1));
  }

  private static int[] freePorts(int n) throws IOException {
    int[] ports = new int[n];
    List<ServerSocket> held = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        held.add(s);
        ports[i] = s.getLocalPort();
      }
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
    return ports;
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + edgePort + path))
            .timeout(Duration.ofSeconds(20))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aRequestCrossesAllTiersAndItsDeadlineShrinksTierByTier() throws Exception {
    HttpResponse<String> r = get("/api/items");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("hello from origin /api/items");
    var seen = api.seenHeaders.get(0);
    assertThat(seen.get("Via")).containsExactly("1.1 edge-1, 1.1 shield-1, 1.1 connector-1");
    // edge 8 s - 50 ms, shield min(5 s, that) - 50 ms, connector min(3 s, that) - 50 ms
    long deadline = Long.parseLong(seen.get("Parapet-deadline").get(0));
    assertThat(deadline).isBetween(1L, 2_950L);
    assertThat(get("/static/logo.png").statusCode()).isEqualTo(200);
    assertThat(statics.calls.get()).isEqualTo(1);
  }

  @Test
  void aSlowOriginMakesTheInnermostTierGiveUpFirst() throws Exception {
    api.delayMillis.set(4_000); // beyond the connector's 2.5 s attempt, within the shield's 4 s
    HttpResponse<String> r = get("/api/slow");
    assertThat(r.statusCode()).isEqualTo(504);
    // the connector's answer, passed through the shield and the edge unchanged
    assertThat(r.headers().firstValue("Proxy-Status"))
        .hasValueSatisfying(
            v -> assertThat(v).startsWith("connector-1; error=http_response_timeout"));
    assertThat(r.headers().firstValue("Via"))
        .hasValueSatisfying(v -> assertThat(v).contains("1.1 shield-1", "1.1 edge-1"));
    // and the healthy route behind the same tiers is unaffected
    assertThat(get("/static/ok").statusCode()).isEqualTo(200);
  }

  @Test
  void theEdgeAnswersOverHttpsWithHttp2ByAlpn() throws Exception {
    HttpClient https =
        HttpClient.newBuilder()
            .sslContext(ca.clientContext())
            .version(HttpClient.Version.HTTP_2)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    HttpResponse<String> r =
        https.send(
            HttpRequest.newBuilder(URI.create("https://localhost:" + edgeTlsPort + "/api/items"))
                .timeout(Duration.ofSeconds(20))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(r.body()).isEqualTo("hello from origin /api/items");
    // the tiers behind the edge hear that the client came over HTTPS
    assertThat(api.seenHeaders.get(0).get("X-forwarded-proto")).containsExactly("https");
  }
}
