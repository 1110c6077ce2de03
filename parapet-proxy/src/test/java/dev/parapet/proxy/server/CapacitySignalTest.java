package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.retry.RetryOn;
import dev.parapet.proxy.config.AdmissionConfig;
import dev.parapet.proxy.config.HedgeConfig;
import dev.parapet.proxy.config.RetryConfig;
import dev.parapet.proxy.flow.RequestFlow;
import dev.parapet.proxy.server.ResilienceTest.Reply;
import dev.parapet.proxy.server.ResilienceTest.ScriptedOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.upstream.OriginSettings;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tiers that hear each other: a tier that sheds (or runs near its limit) says {@code
 * Parapet-Capacity: degraded; q=…}, and the tier in front holds back its retries toward it instead
 * of multiplying the load it cannot take (seed 003). Counts, not timing.
 */
class CapacitySignalTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private static RetryConfig retries(Duration capacityHold) {
    return new RetryConfig(
        3,
        new RetryOn(true, false, List.of("503")),
        new RetryConfig.Budget(1.0, 50),
        new RetryConfig.Backoff(Duration.ofMillis(1), Duration.ofMillis(5)),
        capacityHold);
  }

  private static AdmissionConfig admission(int limit, int queue) {
    return new AdmissionConfig(
        new AdmissionConfig.Limit(AdmissionConfig.Algorithm.FIXED, limit, 1, limit),
        new AdmissionConfig.Queue(queue, Duration.ofSeconds(5), Duration.ofSeconds(10)),
        AdmissionConfig.Priority.DEFAULTS,
        AdmissionConfig.RetryAfter.DEFAULTS);
  }

  /** A shield that admits one request at a time and queues none, in front of a slow origin. */
  private ProxyServer shield(ScriptedOrigin origin) throws Exception {
    return fx.proxy()
        .name("shield")
        .settings(s -> s.withAdmission(admission(1, 0)))
        .trustingLoopback()
        .routes(route("/", "/", "api"))
        .origins(OriginSettings.defaults("api", List.of(origin.address())))
        .start();
  }

  private ProxyServer edge(ProxyServer shield, Duration capacityHold) throws Exception {
    InetSocketAddress next = new InetSocketAddress(InetAddress.getLoopbackAddress(), shield.port());
    return fx.proxy()
        .name("edge")
        .seed(7)
        .routes(route("/", "/", "shield"))
        .origins(
            OriginSettings.defaults("shield", List.of(next))
                .withTraffic(retries(capacityHold), HedgeConfig.OFF, null))
        .start();
  }

  private static double retries(ProxyServer p, String result) {
    for (String line : p.metrics().scrape().split("\n")) {
      if (line.startsWith("parapet_retries_total{") && line.contains("result=\"" + result + "\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  /** Sends {@code n} requests at once through {@code edge} while one holds the shield's slot. */
  private List<HttpResponse<String>> burst(ProxyServer edge, ProxyServer shield, int n)
      throws Exception {
    CompletableFuture<HttpResponse<String>> holder = fx.sendAsync(edge.port(), "/hold");
    await().atMost(Duration.ofSeconds(10)).until(() -> shield.admission().inflight() == 1);
    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      all.add(fx.sendAsync(edge.port(), "/x" + i));
    }
    List<HttpResponse<String>> out = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> f : all) {
      out.add(f.get());
    }
    assertThat(holder.get().statusCode()).isEqualTo(200);
    return out;
  }

  @Test
  void aShieldThatShedsStopsTheEdgesRetriesTowardIt() throws Exception {
    ScriptedOrigin origin = fx.closeLater(new ScriptedOrigin(n -> new Reply(200, 1500, "")));
    ProxyServer shield = shield(origin);
    ProxyServer edge = edge(shield, RetryConfig.CAPACITY_HOLD);

    List<HttpResponse<String>> answers = burst(edge, shield, 5);

    long shed = answers.stream().filter(r -> r.statusCode() == 503).count();
    assertThat(shed).isEqualTo(5); // the shield admits one at a time; the holder has it
    for (HttpResponse<String> r : answers) {
      // The shield's hint is about the shield, for the edge alone: the edge's client never sees it.
      assertThat(r.headers().firstValue(RequestFlow.CAPACITY_HEADER)).isEmpty();
    }
    assertThat(retries(edge, "sent")).isZero();
    assertThat(retries(edge, "upstream_degraded")).isEqualTo(5.0);
    assertThat(edge.metrics().scrape())
        .containsPattern("parapet_origin_degraded\\{origin=\"shield\"} 1.0");
  }

  /** The same burst with the signal ignored: the edge retries into the shedding shield. */
  @Test
  void withTheSignalIgnoredTheEdgeRetriesIntoTheShieldsSheds() throws Exception {
    ScriptedOrigin origin = fx.closeLater(new ScriptedOrigin(n -> new Reply(200, 1500, "")));
    ProxyServer shield = shield(origin);
    ProxyServer edge = edge(shield, Duration.ZERO);

    burst(edge, shield, 5);

    assertThat(retries(edge, "sent")).isGreaterThanOrEqualTo(5.0);
    assertThat(retries(edge, "upstream_degraded")).isZero();
  }

  /** Near its limit, a tier tells a trusted caller early, on answers it still serves. */
  @Test
  void aTierNearItsLimitSaysSoToTrustedCallersOnly() throws Exception {
    ScriptedOrigin origin = fx.closeLater(new ScriptedOrigin(n -> Reply.ok()));
    ProxyServer trusting = shield(origin);
    ProxyServer wary =
        fx.proxy()
            .name("wary")
            .settings(s -> s.withAdmission(admission(1, 0)))
            .routes(route("/", "/", "api"))
            .origins(OriginSettings.defaults("api", List.of(origin.address())))
            .start();

    HttpResponse<String> toTrusted = fx.get(trusting.port(), "/x");
    HttpResponse<String> toStranger = fx.get(wary.port(), "/x");

    assertThat(toTrusted.statusCode()).isEqualTo(200);
    assertThat(toTrusted.headers().firstValue(RequestFlow.CAPACITY_HEADER).orElseThrow())
        .startsWith("degraded; q=0.00; limit=1; inflight=1");
    assertThat(toStranger.statusCode()).isEqualTo(200);
    assertThat(toStranger.headers().firstValue(RequestFlow.CAPACITY_HEADER)).isEmpty();
  }
}
