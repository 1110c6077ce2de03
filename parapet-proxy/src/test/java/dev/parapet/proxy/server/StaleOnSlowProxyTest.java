package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.retry.RetryOn;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.config.HedgeConfig;
import dev.parapet.proxy.config.RetryConfig;
import dev.parapet.proxy.faultorigin.Behaviour;
import dev.parapet.proxy.faultorigin.FaultOrigin;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.faultorigin.Latency;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.server.ResilienceTest.Reply;
import dev.parapet.proxy.server.ResilienceTest.ScriptedOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Stale without waiting ({@code stale_on_slow}), through the proxy on loopback in front of a fault
 * origin that turns slow: the stored copy is answered before the origin does, the fetch goes on and
 * refreshes the entry, and requests arriving meanwhile do not wait for it either.
 */
class StaleOnSlowProxyTest {
  private final AtomicLong skew = new AtomicLong();
  private final Ticker ticker = () -> System.nanoTime() + skew.get();

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  /** The cache's defaults, with route {@code r}'s {@code stale_on_slow} fixed at {@code wait}. */
  private static EdgeCache cache(Duration wait) {
    return new EdgeCache(
        ProxyFixture.NAME,
        CacheDefaultsProxyTest.defaults(),
        Runnable::run,
        System::currentTimeMillis,
        Map.of("r", new EdgeCache.RouteRules(Duration.ZERO, wait)));
  }

  private ProxyServer proxy(FaultOrigin o, String cacheControlOfTheStoredCopy)
      throws InterruptedException {
    EdgeCache cache = cache(Duration.ofMillis(100));
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(
                pool("o", o.address())
                    .timeout(Duration.ofSeconds(20))
                    .breaker(BreakerPolicy.builder().minRequests(1000).build())
                    .build())
            .cache(cache)
            .ticker(ticker)
            .start();
    o.swapPlan(plan(cacheControlOfTheStoredCopy, Latency.NONE)).join();
    return p;
  }

  private static FaultPlan plan(String cacheControl, Latency latency) {
    return FaultPlan.of(Behaviour.builder().cacheControl(cacheControl).latency(latency).build());
  }

  private static String cacheStatus(HttpResponse<?> r) {
    return r.headers().firstValue("Cache-Status").orElse("");
  }

  @Test
  void aSlowOriginIsAnsweredStaleAndTheFetchRefreshesTheEntryBehindIt() throws Exception {
    FaultOrigin o = fx.faultOrigin(FaultPlan.DEFAULT);
    ProxyServer p = proxy(o, "max-age=1");
    assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200);
    skew.addAndGet(Duration.ofSeconds(5).toNanos()); // stale now
    // the origin now takes 3 s, far beyond stale_on_slow (100 ms), within its timeout (20 s)
    o.swapPlan(plan("max-age=600", new Latency.Fixed(Duration.ofSeconds(3).toNanos()))).join();

    HttpResponse<String> leader = fx.get(p.port(), "/x");
    assertThat(leader.statusCode()).isEqualTo(200);
    assertThat(cacheStatus(leader)).contains("fwd=stale").contains("detail=\"stale slow-origin\"");
    assertThat(leader.headers().firstValue("Cache-Control")).hasValue("max-age=1");

    // a request while the fetch is under way waits for neither the origin nor the fetch
    HttpResponse<String> meanwhile = fx.get(p.port(), "/x");
    assertThat(cacheStatus(meanwhile)).contains("detail=\"stale slow-origin\"");

    // the fetch finishes behind the answers and refreshes the entry: then a fresh hit
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> {
          HttpResponse<String> r = fx.get(p.port(), "/x");
          assertThat(cacheStatus(r)).startsWith(ProxyFixture.NAME + "; hit");
          assertThat(r.headers().firstValue("Cache-Control")).hasValue("max-age=600");
        });
    assertThat(p.cache().total(EdgeCache.Status.STALE_ON_SLOW)).isGreaterThanOrEqualTo(2);
    assertThat(o.stats().trafficRequests()).isEqualTo(2); // the first fetch and the slow one
  }

  @Test
  void aResponseThatMustBeRevalidatedWaitsForTheOrigin() throws Exception {
    FaultOrigin o = fx.faultOrigin(FaultPlan.DEFAULT);
    ProxyServer p = proxy(o, "max-age=1, must-revalidate");
    fx.get(p.port(), "/m");
    skew.addAndGet(Duration.ofSeconds(5).toNanos());
    o.swapPlan(plan("max-age=600", new Latency.Fixed(Duration.ofMillis(400).toNanos()))).join();
    HttpResponse<String> r = fx.get(p.port(), "/m");
    assertThat(cacheStatus(r)).doesNotContain("stale slow-origin").contains("fwd-status=200");
    assertThat(r.headers().firstValue("Cache-Control")).hasValue("max-age=600");
  }

  /**
   * When the origin says 503 and to come back only after the {@code stale_on_slow} wait would have
   * run out, the retry cannot answer in time: the leader and the request waiting for its fetch are
   * answered their stale copies at once, not when their timers run out. The timers here (60 s) are
   * longer than the test client waits (30 s), so only the early answer passes.
   */
  @Test
  void aRetryThatComesAfterTheWaitRunsOutIsNotWaitedFor() throws Exception {
    // The first answer is stored; the second, held until released, is a 503 that says to come
    // back in 90 s; later ones are fresh.
    CountDownLatch release = new CountDownLatch(1);
    ScriptedOrigin o =
        fx.closeLater(
            new ScriptedOrigin(n ->
                switch (n) {
                  case 0 -> new Reply(200, 0, "", "max-age=1");
                  case 1 -> {
                    await().atMost(Duration.ofSeconds(20)).until(() -> release.getCount() == 0);
                    yield new Reply(503, 0, "90");
                  }
                  default -> new Reply(200, 0, "", "max-age=600");
                }));
    EdgeCache cache = cache(Duration.ofSeconds(60));
    RetryConfig retries =
        new RetryConfig(
            2,
            new RetryOn(true, false, List.of("503")),
            new RetryConfig.Budget(1.0, 10),
            new RetryConfig.Backoff(Duration.ofMillis(1), Duration.ofMillis(5)));
    ProxyServer p =
        fx.proxy()
            .routes(new Route("r", null, "/", "o", Duration.ofSeconds(120)))
            .origins(
                pool("o", o.address())
                    .timeout(Duration.ofSeconds(120))
                    .breaker(BreakerPolicy.builder().minRequests(1000).build())
                    .build()
                    .withTraffic(retries, HedgeConfig.OFF, null))
            .cache(cache)
            .ticker(ticker)
            .start();
    assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200);
    skew.addAndGet(Duration.ofSeconds(5).toNanos()); // stale now

    CompletableFuture<HttpResponse<String>> leader = fx.sendAsync(p.port(), "/x");
    await().atMost(Duration.ofSeconds(20)).until(() -> o.calls.get() == 2);
    CompletableFuture<HttpResponse<String>> waiter = fx.sendAsync(p.port(), "/x");
    await().atMost(Duration.ofSeconds(20)).until(() -> cache.collapser().collapsedTotal() == 1);
    release.countDown(); // the 503: come back in 90 s

    for (HttpResponse<String> r : List.of(leader.get(), waiter.get())) {
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("call 0");
      assertThat(cacheStatus(r)).contains("detail=\"stale slow-origin\"");
    }
    // one joining while the retry waits is answered at once too
    HttpResponse<String> later = fx.get(p.port(), "/x");
    assertThat(later.body()).isEqualTo("call 0");
    assertThat(cacheStatus(later)).contains("detail=\"stale slow-origin\"");
    assertThat(o.calls.get()).as("the retry is not sent before its time").isEqualTo(2);
  }
}
