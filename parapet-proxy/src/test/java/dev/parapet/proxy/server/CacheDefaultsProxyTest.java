package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.time.HttpDate;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.cache.Heuristic;
import dev.parapet.proxy.cache.StaleTrigger;
import dev.parapet.proxy.testing.CacheOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The edge cache in its default configuration, through the proxy on loopback: stale only when
 * someone permitted it (RFC 9111 §4.2.4), heuristic freshness from Last-Modified (§4.2.2), any
 * status with explicit freshness stored, no-cache responses validated on every use, Age on every
 * answer from the cache. The proxy's monotonic clock is moved by the test.
 */
class CacheDefaultsProxyTest {
  private static final String NAME = ProxyFixture.NAME;
  private final AtomicLong skew = new AtomicLong();
  private final Ticker ticker = () -> System.nanoTime() + skew.get();

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private void advanceSeconds(long s) {
    skew.addAndGet(Duration.ofSeconds(s).toNanos());
  }

  /** The defaults of {@code cache:}: what {@code CacheConfig.DEFAULTS} builds. */
  static EdgeCache.Settings defaults() {
    return new EdgeCache.Settings(
        64L * 1024 * 1024,
        Duration.ofSeconds(300),
        Duration.ZERO,
        StaleTrigger.UNREACHABLE,
        new Heuristic(0, 0.10, Duration.ofHours(24).toNanos()));
  }

  private ProxyServer proxy(CacheOrigin o) throws InterruptedException {
    EdgeCache cache =
        new EdgeCache(
            NAME,
            defaults(),
            Runnable::run,
            System::currentTimeMillis,
            Map.of("r", EdgeCache.RouteRules.DEFAULTS));
    return fx.proxy()
        .routes(route("r", "/", "o"))
        .origins(
            pool("o", o.address())
                .timeout(Duration.ofSeconds(5))
                .breaker(BreakerPolicy.builder().minRequests(1000).build())
                .build())
        .cache(cache)
        .ticker(ticker)
        .start();
  }

  private static String cacheStatus(HttpResponse<?> r) {
    return r.headers().firstValue("Cache-Status").orElse("");
  }

  @Test
  void withAHealthyOriginNothingUnpermittedIsServedStale() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    ProxyServer p = proxy(o);
    String[][] cases = {
      {"Cache-Control", "max-age=0", "ETag", "\"v1\""},
      {"Expires", HttpDate.format(System.currentTimeMillis() - 120_000), "ETag", "\"v1\""},
      {"Cache-Control", "max-age=1", "ETag", "\"v1\""},
    };
    int path = 0;
    for (String[] headers : cases) {
      o.headers(headers);
      String target = "/s/" + path++;
      fx.get(p.port(), target);
      advanceSeconds(2);
      int before = o.count();
      HttpResponse<String> r = fx.get(p.port(), target);
      String what = String.join(" ", headers);
      assertThat(o.count()).as(what).isEqualTo(before + 1); // asked the origin, did not wait
      assertThat(o.last().header("If-None-Match")).as(what).isEqualTo("\"v1\"");
      assertThat(cacheStatus(r)).as(what).doesNotContain("stale-while-revalidate");
      assertThat(cacheStatus(r)).as(what).contains("fwd=stale; fwd-status=304");
      assertThat(r.headers().firstValue("Age")).as(what).isPresent();
    }
  }

  @Test
  void anOrigin5xxIsForwardedUnlessTheResponseGrantedStaleIfError() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    ProxyServer p = proxy(o);
    o.headers("Cache-Control", "max-age=1");
    fx.get(p.port(), "/plain");
    o.headers("Cache-Control", "max-age=1, stale-if-error=60");
    fx.get(p.port(), "/granted");
    advanceSeconds(3);
    o.status = 503;
    o.headers();

    HttpResponse<String> plain = fx.get(p.port(), "/plain");
    assertThat(plain.statusCode()).isEqualTo(503);
    assertThat(cacheStatus(plain)).doesNotContain("detail");

    HttpResponse<String> granted = fx.get(p.port(), "/granted");
    assertThat(granted.statusCode()).isEqualTo(200);
    assertThat(granted.body()).isEqualTo("body of /granted");
    assertThat(cacheStatus(granted)).contains("detail=\"stale origin-5xx\"");
  }

  @Test
  void aLastModifiedResponseIsFreshForAFractionOfItsAge() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    long now = System.currentTimeMillis();
    // ten days unchanged: fresh for one (10 %)
    o.headers("Last-Modified", HttpDate.format(now - 10L * 86_400_000L));
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/lm");
    advanceSeconds(3600);
    HttpResponse<String> hit = fx.get(p.port(), "/lm");
    assertThat(o.count()).isEqualTo(1);
    assertThat(cacheStatus(hit)).startsWith(NAME + "; hit; ttl=");
    assertThat(Long.parseLong(hit.headers().firstValue("Age").orElseThrow()))
        .isGreaterThanOrEqualTo(3600);
    advanceSeconds(86_400);
    fx.get(p.port(), "/lm");
    assertThat(o.count()).isEqualTo(2);
  }

  @Test
  void anyStatusWithExplicitFreshnessIsStored() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.status = 500;
    o.headers("Cache-Control", "max-age=60");
    ProxyServer p = proxy(o);
    HttpResponse<String> first = fx.get(p.port(), "/err");
    assertThat(cacheStatus(first)).isEqualTo(NAME + "; fwd=miss; fwd-status=500; stored");
    HttpResponse<String> second = fx.get(p.port(), "/err");
    assertThat(o.count()).isEqualTo(1);
    assertThat(second.statusCode()).isEqualTo(500);
    assertThat(cacheStatus(second)).startsWith(NAME + "; hit");
  }

  @Test
  void aNoCacheResponseWithAValidatorIsStoredAndValidatedOnEveryUse() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "no-cache", "ETag", "\"n1\"");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/nc");
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> r = fx.get(p.port(), "/nc");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("body of /nc");
      assertThat(o.last().header("If-None-Match")).isEqualTo("\"n1\"");
      assertThat(cacheStatus(r)).contains("fwd-status=304");
    }
    assertThat(o.count()).isEqualTo(3);
  }
}
