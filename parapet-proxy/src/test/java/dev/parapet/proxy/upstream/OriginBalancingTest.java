package dev.parapet.proxy.upstream;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.outlier.OutlierConfig;
import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.admin.AdminServer;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.testing.PathOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Balancing, ejection, health checks and slow start through the whole proxy, over real sockets on
 * loopback. Assertions are on request counts per host; time that matters (ejection length, slow
 * start) is a {@link ManualTicker}, so nothing depends on how fast the machine is.
 */
class OriginBalancingTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  /** The pool {@code api} on {@code hosts}, with the default breaker (scoped to the route). */
  private static OriginSettings settings(
      List<PathOrigin> hosts, HostSelection selection, Duration timeout) {
    return settings(hosts, selection, timeout, Scope.ROUTE);
  }

  private static OriginSettings settings(
      List<PathOrigin> hosts, HostSelection selection, Duration timeout, Scope scope) {
    return pool("api", hosts.stream().map(PathOrigin::address).toList())
        .timeout(timeout)
        .scope(scope)
        .build()
        .withSelection(selection);
  }

  /** A proxy whose one route, {@code api}, sends every path to {@code origin} within 20 s. */
  private ProxyServer proxy(OriginSettings origin, Ticker ticker) throws Exception {
    return fx.proxy()
        .name("edge-lb")
        .seed(7)
        .ticker(ticker)
        .routes(new Route("api", null, "/", "api", Duration.ofSeconds(20)))
        .origins(origin)
        .start();
  }

  private JsonNode host(AdminServer a, int index) throws Exception {
    JsonNode origins = JSON.readTree(fx.get(a.port(), "/admin/origins").body());
    return origins.get(0).get("hosts").get(index);
  }

  @Test
  void failingHostGetsOnlyHealthChecksThenReturnsThroughSlowStart() throws Exception {
    ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - Duration.ofMinutes(1).toNanos());
    PathOrigin good = fx.pathOrigin("good");
    PathOrigin bad = fx.pathOrigin("bad");
    bad.status.set(500);
    bad.healthStatus.set(500);
    HostSelection selection =
        new HostSelection(
            "round_robin",
            OutlierConfig.defaults()
                .withConsecutive5xx(3)
                .withEjection(Duration.ofSeconds(30), Duration.ofSeconds(300)),
            new HostSelection.HealthCheck(
                PathOrigin.HEALTH, Duration.ofMillis(50), Duration.ofSeconds(2), 2, 2),
            Duration.ofSeconds(60));
    ProxyServer p = proxy(settings(List.of(good, bad), selection, Duration.ofSeconds(5)), ticker);
    AdminServer admin = fx.admin(p, ticker);

    // Until it is out, the bad host gets its share; 3 failures in a row eject it (or the
    // health checks take it out first).
    for (int i = 0; i < 20; i++) {
      fx.get(p.port(), "/item/" + i);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> p.origins().get("api").ejectedHosts() == 1);
    int badBefore = bad.requests.get();
    int goodBefore = good.requests.get();
    assertThat(badBefore).isLessThanOrEqualTo(3);
    int checksBefore = bad.healthChecks.get();
    for (int i = 0; i < 40; i++) {
      assertThat(fx.get(p.port(), "/item/" + i).statusCode()).isEqualTo(200);
    }
    assertThat(bad.requests.get()).isEqualTo(badBefore);
    assertThat(good.requests.get()).isEqualTo(goodBefore + 40);
    // ... while health checks keep reaching it.
    await().atMost(Duration.ofSeconds(30)).until(() -> bad.healthChecks.get() > checksBefore + 2);
    JsonNode out = host(admin, 1);
    assertThat(out.get("healthy").asBoolean()).isFalse();
    assertThat(out.get("weight").asDouble()).isZero();
    JsonNode pool = JSON.readTree(fx.get(admin.port(), "/admin/origins").body()).get(0);
    assertThat(pool.get("ejected_hosts").asInt()).isEqualTo(1);
    assertThat(fx.get(admin.port(), "/metrics").body())
        .contains("parapet_ejected_hosts{origin=\"api\"} 1.0");

    // The host heals: health checks bring it back, the outlier ejection (if any) runs out.
    bad.status.set(200);
    bad.healthStatus.set(200);
    ticker.advance(Duration.ofSeconds(301));
    await().atMost(Duration.ofSeconds(30)).until(() -> p.origins().get("api").ejectedHosts() == 0);
    JsonNode back = host(admin, 1);
    assertThat(back.get("healthy").asBoolean()).isTrue();
    assertThat(back.get("ejected").asBoolean()).isFalse();
    assertThat(back.get("slow_start").asBoolean()).isTrue();

    // Slow start: right after the return it weighs 10 % of the good host...
    int badAtReturn = bad.requests.get();
    for (int i = 0; i < 110; i++) {
      assertThat(fx.get(p.port(), "/item/" + i).statusCode()).isEqualTo(200);
    }
    int rampShare = bad.requests.get() - badAtReturn;
    assertThat(rampShare).isBetween(1, 20);

    // ... and once the window has passed, an equal share.
    ticker.advance(Duration.ofSeconds(61));
    int badFull = bad.requests.get();
    for (int i = 0; i < 100; i++) {
      fx.get(p.port(), "/item/" + i);
    }
    assertThat(bad.requests.get() - badFull).isBetween(45, 55);
    assertThat(host(admin, 1).get("slow_start").asBoolean()).isFalse();
  }

  @Test
  void ringHashKeepsAKeyOnOneHost() throws Exception {
    List<PathOrigin> hosts = List.of(fx.pathOrigin("a"), fx.pathOrigin("b"), fx.pathOrigin("c"));
    HostSelection selection = HostSelection.defaults().withBalancer("ring_hash");
    ProxyServer p = proxy(settings(hosts, selection, Duration.ofSeconds(5)), Ticker.system());
    for (int i = 0; i < 10; i++) {
      assertThat(fx.get(p.port(), "/objects/sticky?n=" + i).statusCode()).isEqualTo(200);
    }
    long holding = hosts.stream().filter(h -> h.paths.contains("/objects/sticky")).count();
    assertThat(holding).isEqualTo(1);
    assertThat(hosts.stream().mapToInt(h -> h.requests.get()).max().orElseThrow()).isEqualTo(10);

    // Different keys spread over the ring (30 keys on one host of 3: odds 3^-29).
    Set<String> used = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      used.add(fx.get(p.port(), "/objects/k" + i).headers().firstValue("X-Host").orElseThrow());
    }
    assertThat(used).hasSizeGreaterThan(1);
  }

  @Test
  void ringHashShardsScopeTheirOwnBreakers() throws Exception {
    List<PathOrigin> hosts = List.of(fx.pathOrigin("a"), fx.pathOrigin("b"), fx.pathOrigin("c"));
    HostSelection selection = HostSelection.defaults().withBalancer("ring_hash");
    ProxyServer p =
        proxy(settings(hosts, selection, Duration.ofSeconds(5), Scope.SHARD), Ticker.system());
    OriginPool pool = p.origins().get("api");
    for (int shard = 0; shard < 3; shard++) {
      assertThat(p.breakers().find(BreakerKey.of(Scope.SHARD, "api/" + shard))).isNotNull();
    }
    int shard = pool.shardOf(pool.hashKey("/objects/7", null));
    for (int i = 0; i < 5; i++) {
      assertThat(fx.get(p.port(), "/objects/7").statusCode()).isEqualTo(200);
    }
    long now = System.nanoTime();
    for (int s = 0; s < 3; s++) {
      long calls = p.breakers().find(BreakerKey.of(Scope.SHARD, "api/" + s)).snapshot(now).calls();
      assertThat(calls).as("shard %d", s).isEqualTo(s == shard ? 5 : 0);
    }
  }

  @Test
  void leastRequestPrefersTheIdleHost() throws Exception {
    PathOrigin busy = fx.pathOrigin("busy");
    PathOrigin idle = fx.pathOrigin("idle");
    busy.hold = true;
    HostSelection selection = HostSelection.defaults().withBalancer("least_request");
    ProxyServer p =
        proxy(settings(List.of(busy, idle), selection, Duration.ofSeconds(20)), Ticker.system());
    List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      int sent = i + 1;
      pending.add(fx.sendAsync(p.port(), "/r/" + i));
      // One at a time: each request is either held by the busy host or answered by the idle one.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() ->
              busy.held.get()
                      + pending.stream()
                          .filter(f -> f.isDone() && f.join().statusCode() == 200)
                          .count()
                  == sent);
    }
    // Only the very first request (both idle: a tie) may have gone to the busy host.
    assertThat(busy.held.get()).isLessThanOrEqualTo(1);
    assertThat(idle.requests.get()).isGreaterThanOrEqualTo(19);
    assertThat(p.origins().get("api").hosts().get(0).inflight()).isEqualTo(busy.held.get());
    busy.releaseHeld();
    for (CompletableFuture<HttpResponse<String>> f : pending) {
      assertThat(f.get().statusCode()).isEqualTo(200);
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> p.origins().get("api").hosts().get(0).inflight() == 0);
  }
}
