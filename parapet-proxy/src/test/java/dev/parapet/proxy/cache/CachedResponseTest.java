package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.T0;
import static dev.parapet.proxy.cache.Http.WALL;
import static dev.parapet.proxy.cache.Http.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.HttpDate;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;

/** What an entry keeps of the response (RFC 9111 §3.1, §5.2.2.4, §5.2.2.7). */
class CachedResponseTest {

  @Test
  void fieldsNamedByQualifiedPrivateOrNoCacheAreNotStored() {
    CachedResponse r =
        Http.response(
            "Cache-Control", "max-age=60, private=\"X-User\", no-cache=\"Set-Cookie\"",
            "X-User", "alice",
            "Set-Cookie", "s=1",
            "Content-Type", "text/html");
    assertThat(r.headers().contains("X-User")).isFalse();
    assertThat(r.headers().contains("Set-Cookie")).isFalse();
    assertThat(r.headers().get("Content-Type")).isEqualTo("text/html");
  }

  @Test
  void ageIsNotStoredButFoldedIntoTheInitialAge() {
    CachedResponse r = Http.response("Cache-Control", "max-age=60", "Age", "20");
    assertThat(r.headers().contains("Age")).isFalse();
    assertThat(r.ageSeconds(T0)).isEqualTo(20);
  }

  @Test
  void contentLengthIsTheStoredBodyLength() {
    CachedResponse r = Http.response("Cache-Control", "max-age=60", "Content-Length", "999");
    assertThat(r.headers().get("Content-Length")).isEqualTo("5");
    assertThat(r.bodyLength()).isEqualTo(5);
    CachedResponse noContent =
        CachedResponse.of(
            204, headers("Cache-Control", "max-age=60"), new byte[0], headers(), T0, T0, WALL, 0);
    assertThat(noContent.headers().contains("Content-Length")).isFalse();
  }

  @Test
  void storedHeadersAreReadOnlyAndCopyableForAResponse() {
    CachedResponse r = Http.response("Cache-Control", "max-age=60", "X-A", "1");
    assertThatThrownBy(() -> r.headers().set("X-A", "2"))
        .isInstanceOf(UnsupportedOperationException.class);
    HttpHeaders copy = r.headers().copy();
    copy.set("Age", "3");
    assertThat(copy.get("X-A")).isEqualTo("1");
    assertThat(r.headers().contains("Age")).isFalse();
    assertThat(r.body().isReadOnly()).isTrue();
  }

  @Test
  void weightCountsHeadersAndBody() {
    CachedResponse small = Http.response("Cache-Control", "max-age=60");
    HttpHeaders big = headers("Cache-Control", "max-age=60", "Date", HttpDate.format(WALL));
    CachedResponse large =
        CachedResponse.of(200, big, new byte[10_000], headers(), T0, T0, WALL, 0);
    assertThat(large.weight() - small.weight()).isBetween(9_995, 10_010);
    assertThat(small.weight()).isGreaterThan(CachedResponse.OVERHEAD_BYTES);
  }

  @Test
  void headIsAnsweredFromTheGetEntry() {
    ResponseCache cache = new ResponseCache(1 << 20, 1 << 16, Runnable::run);
    // the request path builds the same key for GET and HEAD: the method is not part of it
    cache.store(CacheKey.of("h", "/x"), Http.response("Cache-Control", "max-age=60"));
    assertThat(cache.lookup(CacheKey.of("H:80", "/x"), headers(), T0).kind())
        .isEqualTo(Lookup.Kind.FRESH);
  }
}
