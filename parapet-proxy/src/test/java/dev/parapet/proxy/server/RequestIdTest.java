package dev.parapet.proxy.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestOrigin;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * One request id from the client (when trusted) or the proxy, through the origin, the access log,
 * problem+json and the breaker transition the request caused; the transition line is pure JSON.
 */
class RequestIdTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private static String seenId(Map<String, List<String>> headers) {
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (e.getKey().equalsIgnoreCase("X-Request-Id")) {
        assertThat(e.getValue()).hasSize(1);
        return e.getValue().get(0);
      }
    }
    throw new AssertionError("no X-Request-Id in " + headers);
  }

  private static List<JsonNode> lines(Path file) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (String line : Files.readAllLines(file)) {
      out.add(JSON.readTree(line));
    }
    return out;
  }

  @Test
  void anUntrustedClientsIdIsReplacedByOneTheWholePathShares(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("access.log");
    TestOrigin origin = fx.testOrigin();
    var p =
        fx.proxy()
            .routes(new Route("/api/", null, "/api/", "api", Duration.ofSeconds(5)))
            .origins(ProxyFixture.pool("api", origin.address()).build())
            .accessLog(log)
            .start();
    fx.get(p.port(), "/api/a", "X-Request-Id", "chosen-by-client");
    HttpResponse<String> notFound = fx.get(p.port(), "/nowhere");
    fx.closeNow(p);

    String forwarded = seenId(origin.seenHeaders.get(0));
    assertThat(forwarded).matches("[0-9a-f]{16}").isNotEqualTo("chosen-by-client");
    List<JsonNode> lines = lines(log);
    assertThat(lines.get(0).get("request_id").asText()).isEqualTo(forwarded);
    String local = lines.get(1).get("request_id").asText();
    assertThat(local).matches("[0-9a-f]{16}").isNotEqualTo(forwarded);
    assertThat(JSON.readTree(notFound.body()).get("request_id").asText()).isEqualTo(local);
    assertThat(notFound.headers().firstValue("X-Request-Id")).hasValue(local);
  }

  @Test
  void aTrustedPeersIdIsKeptAndNamedByTheTransitionItCaused(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("access.log");
    TestOrigin origin = fx.testOrigin();
    origin.status.set(500);
    Logger breakerLog = (Logger) LoggerFactory.getLogger("parapet.breaker");
    ListAppender<ILoggingEvent> events = new ListAppender<>();
    events.start();
    ch.qos.logback.classic.Level level = breakerLog.getLevel();
    breakerLog.setLevel(ch.qos.logback.classic.Level.INFO);
    breakerLog.addAppender(events);
    try {
      var p =
          fx.proxy()
              .trustingLoopback()
              .routes(new Route("/api/", null, "/api/", "api", Duration.ofSeconds(5)))
              .origins(
                  ProxyFixture.pool("api", origin.address())
                      .breaker(BreakerPolicy.builder().minRequests(4).build())
                      .build())
              .accessLog(log)
              .start();
      for (int i = 1; i <= 6; i++) {
        fx.get(p.port(), "/api/x", "X-Request-Id", "edge-req-" + i);
      }
      fx.closeNow(p);
    } finally {
      breakerLog.detachAppender(events);
      breakerLog.setLevel(level);
    }
    assertThat(origin.seenHeaders).hasSize(4);
    for (int i = 0; i < 4; i++) {
      assertThat(seenId(origin.seenHeaders.get(i))).isEqualTo("edge-req-" + (i + 1));
    }
    List<JsonNode> lines = lines(log);
    assertThat(lines).hasSize(6);
    assertThat(lines.get(5).get("request_id").asText()).isEqualTo("edge-req-6");
    JsonNode opened = null;
    for (ILoggingEvent e : events.list) {
      JsonNode n = JSON.readTree(e.getFormattedMessage());
      if (n.get("to").asText().equals("OPEN")) {
        opened = n;
      }
    }
    assertThat(opened).isNotNull();
    assertThat(opened.get("request_id").asText()).isEqualTo("edge-req-4");
  }

  @Test
  void theShippedLogbackConfigurationWritesTransitionsAsBareJsonLines() throws Exception {
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    LoggerContext ctx = new LoggerContext();
    ctx.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter());
    try {
      System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
      JoranConfigurator config = new JoranConfigurator();
      config.setContext(ctx);
      config.doConfigure(BreakerEventLog.class.getResource("/logback.xml"));
      ctx.getLogger("parapet.breaker").info("{\"event\":\"breaker_transition\",\"to\":\"OPEN\"}");
      ctx.getLogger("parapet.other").info("a human line");
    } finally {
      ctx.stop();
      System.setErr(err);
    }
    String[] out = captured.toString(StandardCharsets.UTF_8).split("\n");
    assertThat(out).hasSize(2);
    assertThat(JSON.readTree(out[0]).get("to").asText()).isEqualTo("OPEN");
    assertThat(out[1]).contains("INFO").endsWith("a human line");
  }
}
