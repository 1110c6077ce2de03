package dev.parapet.proxy.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.testing.CacheOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestOrigin;
import dev.parapet.proxy.upstream.OriginSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The access log: one JSON line per request with the fields {@code parapet sim replay} reads. */
class AccessLogTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  @Test
  void everyRequestWritesOneLineWithTheReplayFields(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("access.log");
    TestOrigin origin = fx.testOrigin();
    ProxyServer p =
        fx.proxy()
            .threads(1)
            .routes(new Route("/api/", null, "/api/", "api", Duration.ofSeconds(5)))
            .origins(OriginSettings.defaults("api", List.of(origin.address())))
            .accessLog(file)
            .start();
    for (String path : List.of("/api/a?q=1", "/nowhere")) {
      fx.get(p.port(), path);
    }
    fx.closeNow(p); // writes out what the log holds

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

  /**
   * A stale copy served instead of the proxy's own error is logged with the status the client got;
   * the error stays as the reason, which is what {@code sim replay} reads as the outcome.
   */
  @Test
  void aStaleCopyServedInsteadOfAnErrorIsLoggedWithItsStatusAndTheError(@TempDir Path dir)
      throws Exception {
    Path file = dir.resolve("access.log");
    AtomicLong skew = new AtomicLong();
    Ticker ticker = () -> System.nanoTime() + skew.get();
    CacheOrigin origin = fx.cacheOrigin();
    origin.headers("Cache-Control", "max-age=1");
    ProxyServer p =
        fx.proxy()
            .threads(1)
            .routes(ProxyFixture.route("r", "/", "api"))
            .origins(ProxyFixture.pool("api", origin.address()).build())
            .cache(ProxyFixture.edgeCache("r"))
            .ticker(ticker)
            .accessLog(file)
            .start();
    assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200);
    skew.addAndGet(Duration.ofSeconds(5).toNanos()); // stale now
    fx.closeNow(origin); // refused from now on: the copy is served instead (stale-if-error)
    assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200);
    fx.closeNow(p);

    List<String> lines = Files.readAllLines(file);
    assertThat(lines).hasSize(2);
    JsonNode stale = JSON.readTree(lines.get(1));
    assertThat(stale.get("status").asInt()).isEqualTo(200);
    assertThat(stale.get("error").asText()).isEqualTo("CONNECTION_REFUSED");
  }
}
