package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.testing.CacheOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Validation through the proxy on loopback (RFC 9111 §4.3): a 304 updates the response sent now, a
 * 304 naming a representation the cache does not hold leads to a full fetch, a HEAD response
 * updates the stored metadata, the client's If-None-Match list is compared weakly.
 */
class CacheValidationProxyTest {
  private final AtomicLong skew = new AtomicLong();
  private final Ticker ticker = () -> System.nanoTime() + skew.get();

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private void advanceSeconds(long s) {
    skew.addAndGet(Duration.ofSeconds(s).toNanos());
  }

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
        .ticker(ticker)
        .start();
  }

  private static String header(HttpResponse<?> r, String name) {
    return r.headers().firstValue(name).orElse("");
  }

  @Test
  void a304UpdatesTheHeadersOfTheResponseSentNow() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=1", "ETag", "\"v1\"", "X-Version", "1");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/a");
    advanceSeconds(2);
    o.headers("Cache-Control", "max-age=60", "ETag", "\"v1\"", "X-Version", "2");
    HttpResponse<String> r = fx.get(p.port(), "/a");
    assertThat(o.count()).isEqualTo(2);
    assertThat(header(r, "Cache-Status")).contains("fwd-status=304");
    assertThat(header(r, "X-Version")).isEqualTo("2");
    assertThat(header(r, "Age")).isNotEmpty();
    assertThat(r.body()).isEqualTo("body of /a");
    // and the stored entry: fresh for 60 s now, with the new field
    advanceSeconds(10);
    HttpResponse<String> hit = fx.get(p.port(), "/a");
    assertThat(o.count()).isEqualTo(2);
    assertThat(header(hit, "X-Version")).isEqualTo("2");
  }

  @Test
  void a304ForARepresentationNotHeldLeadsToAFullFetchNotA502() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=1", "ETag", "\"v1\"");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/b");
    advanceSeconds(2);
    o.headers("Cache-Control", "max-age=60", "ETag", "\"v2\"");
    o.notModifiedToAnyConditional = true;
    HttpResponse<String> r = fx.get(p.port(), "/b");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("body of /b");
    assertThat(header(r, "ETag")).isEqualTo("\"v2\"");
    assertThat(o.count()).isEqualTo(3); // the conditional, then the request in full
    assertThat(o.last().header("If-None-Match")).isNull();
    HttpResponse<String> hit = fx.get(p.port(), "/b");
    assertThat(o.count()).isEqualTo(3);
    assertThat(header(hit, "Cache-Status")).contains("hit");
  }

  @Test
  void aHeadResponseUpdatesTheStoredMetadataOrDropsAnEntryItContradicts() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.ignoreConditionals = true; // the HEAD is answered 200, never 304
    o.headers("Cache-Control", "max-age=1", "ETag", "\"h1\"");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/h");
    advanceSeconds(2);
    // another ETag: the stored GET response is no longer trusted, the next GET fetches in full
    o.headers("Cache-Control", "max-age=60", "ETag", "\"h1x\"");
    HttpResponse<String> head = fx.send(p.port(), "HEAD", "/h");
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(o.last().method()).isEqualTo("HEAD");
    fx.get(p.port(), "/h");
    assertThat(o.count()).isEqualTo(3);
    assertThat(o.last().method()).isEqualTo("GET");
    assertThat(o.last().header("If-None-Match")).isNull();

    // the same representation: its fields and freshness are updated from the HEAD
    o.headers("Cache-Control", "max-age=1", "ETag", "\"h2\"", "X-Version", "3");
    fx.get(p.port(), "/h2");
    advanceSeconds(2);
    o.headers("Cache-Control", "max-age=60", "ETag", "\"h2\"", "X-Version", "4");
    fx.send(p.port(), "HEAD", "/h2");
    int seen = o.count();
    HttpResponse<String> get = fx.get(p.port(), "/h2");
    assertThat(o.count()).isEqualTo(seen); // fresh again: no request to the origin
    assertThat(header(get, "X-Version")).isEqualTo("4");
    assertThat(header(get, "Cache-Status")).contains("hit");
    assertThat(get.body()).isEqualTo("body of /h2");
  }

  @Test
  void theClientsIfNoneMatchListIsComparedWeakly() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60", "ETag", "W/\"w1\"");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/w");
    HttpResponse<String> r = fx.get(p.port(), "/w", "If-None-Match", "\"x\", \"w1\"");
    assertThat(r.statusCode()).isEqualTo(304);
    HttpResponse<String> miss = fx.get(p.port(), "/w", "If-None-Match", "\"x\", \"y\"");
    assertThat(miss.statusCode()).isEqualTo(200);
    assertThat(o.count()).isEqualTo(1);
  }
}
