package dev.parapet.proxy.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.flow.ProxySettings;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.testing.TestOrigin;
import dev.parapet.proxy.upstream.OriginSettings;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The access log: one JSON line per request with the fields {@code parapet sim replay} reads. */
class AccessLogTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void everyRequestWritesOneLineWithTheReplayFields(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("access.log");
    HttpClient http = HttpClient.newHttpClient();
    try (TestOrigin origin = new TestOrigin()) {
      ProxyServer p =
          ProxyServer.builder(
                  ProxySettings.defaults("edge-test", new InetSocketAddress("127.0.0.1", 0)))
              .routes(List.of(new Route("/api/", null, "/api/", "api", Duration.ofSeconds(5))))
              .origins(List.of(OriginSettings.defaults("api", List.of(origin.address()))))
              .clock(Ticker.system(), RandomSource.seeded(1))
              .threads(1)
              .accessLog(file)
              .build();
      try (p) {
        p.start();
        for (String path : List.of("/api/a?q=1", "/nowhere")) {
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + p.port() + path)).build(),
              HttpResponse.BodyHandlers.discarding());
        }
      }
    }

    List<JsonNode> lines = new ArrayList<>();
    for (String line : Files.readAllLines(file)) {
      lines.add(JSON.readTree(line));
    }
    assertThat(lines).hasSize(2);
    JsonNode forwarded = lines.get(0);
    assertThat(forwarded.get("route").asText()).isEqualTo("/api/");
    assertThat(forwarded.get("status").asInt()).isEqualTo(200);
    assertThat(forwarded.get("method").asText()).isEqualTo("GET");
    assertThat(forwarded.get("target").asText()).isEqualTo("/api/a?q=1");
    assertThat(forwarded.get("attempts").asInt()).isEqualTo(1);
    assertThat(forwarded.get("latency_ms").asDouble()).isPositive();
    assertThat(forwarded.get("time").asDouble())
        .isCloseTo(System.currentTimeMillis() / 1000.0, org.assertj.core.data.Offset.offset(600.0));
    assertThat(forwarded.has("error")).isFalse();
    assertThat(forwarded.get("client").asText()).isEqualTo("127.0.0.1");
    JsonNode local = lines.get(1);
    assertThat(local.get("status").asInt()).isEqualTo(404);
    assertThat(local.get("error").asText()).isEqualTo("NO_ROUTE");
    assertThat(local.get("attempts").asInt()).isZero();
  }
}
