package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.ADMIN_TOKEN;
import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.request;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.admin.AdminServer;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.testing.CacheOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code POST /admin/purge} through the admin listener, seen by clients of the proxy on loopback:
 * by URL, by prefix, by surrogate key; hard and soft; the token required; Surrogate-Key and
 * Cache-Tag never reaching a client.
 */
class CachePurgeProxyTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private ProxyServer proxy(CacheOrigin o) throws InterruptedException {
    EdgeCache cache =
        new EdgeCache(
            ProxyFixture.NAME,
            CacheDefaultsProxyTest.defaults(),
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
        .ticker(Ticker.system())
        .start();
  }

  private HttpResponse<String> purge(AdminServer admin, String json, String token)
      throws Exception {
    HttpRequest.Builder b =
        request(admin.port(), "/admin/purge")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .header("Content-Type", "application/json");
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return fx.send(b);
  }

  /** Fetches each path once (storing it) and returns the origin's count. */
  private int warm(ProxyServer p, CacheOrigin o, String... paths) throws Exception {
    for (String path : paths) {
      HttpResponse<String> r = fx.get(p.port(), path);
      assertThat(r.headers().firstValue("Surrogate-Key")).isEmpty();
      assertThat(r.headers().firstValue("Cache-Tag")).isEmpty();
    }
    return o.count();
  }

  private boolean hit(ProxyServer p, String path) throws Exception {
    return fx.get(p.port(), path).headers().firstValue("Cache-Status").orElse("").contains("hit");
  }

  @Test
  void purgeByUrlPrefixAndSurrogateKey() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers(
        "Cache-Control", "max-age=600", "Surrogate-Key", "product-1  all", "Cache-Tag", "t1,t2");
    ProxyServer p = proxy(o);
    AdminServer admin = fx.admin(p);
    int before = warm(p, o, "/a", "/shop/1", "/shop/2", "/other");
    assertThat(hit(p, "/a")).isTrue();
    String host = "http://127.0.0.1:" + p.port();

    // the token is required, like every change
    assertThat(purge(admin, "{\"url\": \"" + host + "/a\"}", null).statusCode()).isEqualTo(401);
    assertThat(hit(p, "/a")).isTrue();

    HttpResponse<String> byUrl = purge(admin, "{\"url\": \"" + host + "/a\"}", ADMIN_TOKEN);
    assertThat(byUrl.statusCode()).isEqualTo(200);
    assertThat(byUrl.body()).contains("\"purged\" : 1").contains("\"mode\" : \"hard\"");
    assertThat(hit(p, "/a")).isFalse();
    assertThat(o.count()).isEqualTo(before + 1);

    HttpResponse<String> byPrefix =
        purge(admin, "{\"prefix\": \"" + host + "/shop/\"}", ADMIN_TOKEN);
    assertThat(byPrefix.body()).contains("\"purged\" : 2");
    assertThat(hit(p, "/shop/1")).isFalse();
    assertThat(hit(p, "/shop/2")).isFalse();
    assertThat(hit(p, "/other")).isTrue();

    HttpResponse<String> byKey = purge(admin, "{\"key\": \"t2\"}", ADMIN_TOKEN);
    assertThat(byKey.body()).contains("\"purged\" : 4"); // every path carries t2
    assertThat(hit(p, "/other")).isFalse();
    assertThat(purge(admin, "{\"key\": \"nothing-tagged-so\"}", ADMIN_TOKEN).body())
        .contains("\"purged\" : 0");
    assertThat(p.metrics().scrape())
        .contains("parapet_cache_purges_total{by=\"key\",mode=\"hard\"} 2.0")
        .contains("parapet_cache_total{status=\"purged\"} 7.0");
  }

  @Test
  void aSoftPurgeMarksStaleSoTheNextUseValidatesAndStaleIfErrorStillProtects() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=600", "ETag", "\"s1\"", "Surrogate-Key", "k");
    ProxyServer p = proxy(o);
    AdminServer admin = fx.admin(p);
    warm(p, o, "/s");
    HttpResponse<String> soft = purge(admin, "{\"key\": \"k\", \"soft\": true}", ADMIN_TOKEN);
    assertThat(soft.body()).contains("\"purged\" : 1").contains("\"mode\" : \"soft\"");

    HttpResponse<String> validated = fx.get(p.port(), "/s");
    assertThat(o.count()).isEqualTo(2);
    assertThat(o.last().header("If-None-Match")).isEqualTo("\"s1\"");
    assertThat(validated.headers().firstValue("Cache-Status").orElseThrow())
        .contains("fwd-status=304");

    purge(admin, "{\"key\": \"k\", \"soft\": true}", ADMIN_TOKEN);
    o.close(); // the origin is gone: the soft-purged copy is served stale (stale-if-error)
    HttpResponse<String> stale = fx.get(p.port(), "/s");
    assertThat(stale.statusCode()).isEqualTo(200);
    assertThat(stale.body()).isEqualTo("body of /s");
    assertThat(stale.headers().firstValue("Cache-Status").orElseThrow())
        .contains("detail=\"stale connect-error\"");
  }

  @Test
  void aBadPurgeRequestSaysWhatWasExpected() throws Exception {
    ProxyServer p = proxy(fx.cacheOrigin());
    AdminServer admin = fx.admin(p);
    assertThat(purge(admin, "{\"url\": \"/no-host\"}", ADMIN_TOKEN).body())
        .contains("expected: an absolute URL");
    assertThat(purge(admin, "{\"url\": \"http://a/\", \"key\": \"k\"}", ADMIN_TOKEN).statusCode())
        .isEqualTo(400);
    assertThat(purge(admin, "not json", ADMIN_TOKEN).statusCode()).isEqualTo(400);
  }
}
