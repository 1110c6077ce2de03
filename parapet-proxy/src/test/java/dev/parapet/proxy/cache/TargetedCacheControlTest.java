package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.SECOND;
import static dev.parapet.proxy.cache.Http.WALL;
import static dev.parapet.proxy.cache.Http.headers;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.HttpDate;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import org.junit.jupiter.api.Test;

/** Targeted cache control (RFC 9213): Parapet-Cache-Control > CDN-Cache-Control > Cache-Control. */
class TargetedCacheControlTest {

  @Test
  void theFirstTargetedFieldPresentWins() {
    HttpHeaders h =
        headers(
            "Cache-Control", "max-age=5",
            "CDN-Cache-Control", "max-age=60",
            "Parapet-Cache-Control", "max-age=600");
    assertThat(CacheControl.ofResponse(h).maxAge()).isEqualTo(600);
    h.remove("Parapet-Cache-Control");
    assertThat(CacheControl.ofResponse(h).maxAge()).isEqualTo(60);
    h.remove("CDN-Cache-Control");
    assertThat(CacheControl.ofResponse(h).maxAge()).isEqualTo(5);
    assertThat(CacheControl.ofResponse(h).targeted()).isFalse();
  }

  @Test
  void anInvalidOrEmptyTargetedFieldIsIgnoredAsAWhole() {
    HttpHeaders upper = headers("Cache-Control", "max-age=5", "CDN-Cache-Control", "Max-Age=60");
    assertThat(CacheControl.ofResponse(upper).maxAge()).isEqualTo(5);
    HttpHeaders empty = headers("Cache-Control", "max-age=5", "CDN-Cache-Control", "");
    assertThat(CacheControl.ofResponse(empty).maxAge()).isEqualTo(5);
    HttpHeaders open = headers("Cache-Control", "max-age=5", "CDN-Cache-Control", "a=\"x");
    assertThat(CacheControl.ofResponse(open).maxAge()).isEqualTo(5);
    // delta-seconds are Integers in a Structured Field: a String is the wrong type
    for (String wrong :
        new String[] {
          "max-age=\"60\"", "s-maxage=6x", "max-age=", "stale-if-error=a, max-age=60"
        }) {
      HttpHeaders typed = headers("Cache-Control", "no-store", "CDN-Cache-Control", wrong);
      assertThat(CacheControl.ofResponse(typed).noStore()).as(wrong).isTrue();
    }
    HttpHeaders fine =
        headers("Cache-Control", "no-store", "CDN-Cache-Control", "max-age=60, stale-if-error=0");
    assertThat(CacheControl.ofResponse(fine).maxAge()).isEqualTo(60);
    assertThat(CacheControl.ofResponse(fine).noStore()).isFalse();
    // parameters on a member are read and ignored (RFC 8941 §3.2, RFC 9213 §2.1)
    HttpHeaders params =
        headers(
            "Cache-Control",
            "no-store",
            "CDN-Cache-Control",
            "max-age=60;a=1;b=\"x, y\", private;c, stale-if-error=5");
    CacheControl cc = CacheControl.ofResponse(params);
    assertThat(cc.maxAge()).isEqualTo(60);
    assertThat(cc.isPrivate()).isTrue();
    assertThat(cc.staleIfError()).isEqualTo(5);
    assertThat(cc.noStore()).isFalse();
  }

  @Test
  void privateNoStoreAndNoCacheInATargetedFieldAreObeyed() {
    for (String directive : new String[] {"private", "no-store"}) {
      HttpHeaders h =
          headers("Cache-Control", "public, max-age=600", "CDN-Cache-Control", directive);
      assertThat(Storability.of(HttpMethod.GET, headers(), 200, h, 0))
          .as(directive)
          .isNotEqualTo(Storability.STORE);
    }
    HttpHeaders noCache =
        headers("Cache-Control", "max-age=600", "Parapet-Cache-Control", "no-cache, max-age=600");
    assertThat(CacheControl.ofResponse(noCache).forbidsStale()).isTrue();
    // and a targeted field can make shareable what Cache-Control keeps to the browser
    HttpHeaders shared = headers("Cache-Control", "private", "CDN-Cache-Control", "max-age=60");
    assertThat(Storability.of(HttpMethod.GET, headers(), 200, shared, 0))
        .isEqualTo(Storability.STORE);
  }

  @Test
  void aTargetedFieldMakesExpiresIgnored() {
    HttpHeaders h =
        headers(
            "Date", HttpDate.format(WALL),
            "Expires", HttpDate.format(WALL + 3_600_000),
            "CDN-Cache-Control", "must-revalidate");
    CachedResponse e = CachedResponse.of(200, h, new byte[0], headers(), 0, 0, WALL, 0);
    assertThat(e.lifetimeNanos()).isZero();
    h.remove("CDN-Cache-Control");
    e = CachedResponse.of(200, h, new byte[0], headers(), 0, 0, WALL, 0);
    assertThat(e.lifetimeNanos()).isEqualTo(3600 * SECOND);
  }
}
