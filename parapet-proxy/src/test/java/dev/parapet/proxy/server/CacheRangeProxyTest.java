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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A Range request on a stored full response, through the proxy on loopback (RFC 9110 §14). */
class CacheRangeProxyTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  @Test
  void rangesOfAStoredResponseAreAnsweredFromTheCache() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=600", "ETag", "\"r1\"");
    EdgeCache cache =
        new EdgeCache(
            ProxyFixture.NAME,
            CacheDefaultsProxyTest.defaults(),
            Runnable::run,
            System::currentTimeMillis,
            Map.of("r", EdgeCache.RouteRules.DEFAULTS));
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(
                pool("o", o.address())
                    .timeout(Duration.ofSeconds(5))
                    .breaker(BreakerPolicy.builder().minRequests(1000).build())
                    .build())
            .cache(cache)
            .ticker(Ticker.system())
            .start();
    HttpResponse<String> full = fx.get(p.port(), "/range"); // "body of /range", 14 bytes
    assertThat(full.headers().firstValue("Accept-Ranges")).isEmpty(); // the origin's own answer
    assertThat(fx.get(p.port(), "/range").headers().firstValue("Accept-Ranges")).hasValue("bytes");

    HttpResponse<String> first = fx.get(p.port(), "/range", "Range", "bytes=0-3");
    assertThat(first.statusCode()).isEqualTo(206);
    assertThat(first.body()).isEqualTo("body");
    assertThat(first.headers().firstValue("Content-Range")).hasValue("bytes 0-3/14");
    assertThat(first.headers().firstValue("Age")).isPresent();

    HttpResponse<String> suffix = fx.get(p.port(), "/range", "Range", "bytes=-6");
    assertThat(suffix.statusCode()).isEqualTo(206);
    assertThat(suffix.body()).isEqualTo("/range");

    HttpResponse<String> open = fx.get(p.port(), "/range", "Range", "bytes=8-");
    assertThat(open.body()).isEqualTo("/range");
    assertThat(open.headers().firstValue("Content-Range")).hasValue("bytes 8-13/14");

    HttpResponse<String> beyond = fx.get(p.port(), "/range", "Range", "bytes=14-");
    assertThat(beyond.statusCode()).isEqualTo(416);
    assertThat(beyond.headers().firstValue("Content-Range")).hasValue("bytes */14");
    assertThat(beyond.body()).isEmpty();

    HttpResponse<String> stale =
        fx.get(p.port(), "/range", "Range", "bytes=0-3", "If-Range", "\"old\"");
    assertThat(stale.statusCode()).isEqualTo(200);
    assertThat(stale.body()).isEqualTo("body of /range");
    HttpResponse<String> current =
        fx.get(p.port(), "/range", "Range", "bytes=0-3", "If-Range", "\"r1\"");
    assertThat(current.statusCode()).isEqualTo(206);

    assertThat(o.count()).isEqualTo(1);
  }
}
