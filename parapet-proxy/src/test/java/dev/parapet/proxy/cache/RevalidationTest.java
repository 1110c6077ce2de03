package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.SECOND;
import static dev.parapet.proxy.cache.Http.T0;
import static dev.parapet.proxy.cache.Http.WALL;
import static dev.parapet.proxy.cache.Http.headers;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.HttpDate;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** RFC 9111 §4.3: conditional requests, 304 selection and merge, client conditionals. */
class RevalidationTest {
  private static final String LM = "Mon, 13 Nov 2023 10:00:00 GMT";

  @Test
  void conditionalRequestCarriesTheStoredValidators() {
    CachedResponse e =
        Http.response("ETag", "\"v1\"", "Last-Modified", LM, "Cache-Control", "max-age=1");
    HttpHeaders out = headers("If-None-Match", "\"client\"", "If-Match", "\"x\"", "Accept", "*/*");
    assertThat(Revalidation.addValidators(e, out)).isTrue();
    assertThat(out.get("If-None-Match")).isEqualTo("\"v1\"");
    assertThat(out.get("If-Modified-Since")).isEqualTo(LM);
    assertThat(out.contains("If-Match")).isFalse();
    assertThat(out.get("Accept")).isEqualTo("*/*");

    HttpHeaders none = headers();
    assertThat(Revalidation.addValidators(Http.response("Cache-Control", "max-age=1"), none))
        .isFalse();
    assertThat(none.isEmpty()).isTrue();
  }

  @Test
  void notModifiedMergesHeadersKeepsBodyAndRestartsFreshness() {
    CachedResponse e =
        Http.response(
            "ETag", "\"v1\"",
            "Cache-Control", "max-age=10",
            "Content-Type", "text/plain",
            "X-Old", "1");
    long sent = T0 + 100 * SECOND;
    long received = sent + SECOND;
    long wall = WALL + 101_000;
    HttpHeaders notModified =
        headers(
            "ETag", "\"v1\"",
            "Cache-Control", "max-age=60",
            "Date", HttpDate.format(wall),
            "X-Old", "2",
            "Content-Length", "0");
    CachedResponse merged = e.withNotModified(notModified, sent, received, wall, 0);
    assertThat(merged).isNotNull();
    assertThat(merged.body()).isEqualTo(ByteBuffer.wrap("hello".getBytes()));
    assertThat(merged.headers().get("Content-Length")).isEqualTo("5");
    assertThat(merged.headers().get("Content-Type")).isEqualTo("text/plain");
    assertThat(merged.headers().getAll("X-Old")).containsExactly("2");
    assertThat(merged.headers().get("Date")).isEqualTo(HttpDate.format(wall));
    assertThat(merged.lifetimeNanos()).isEqualTo(60 * SECOND);
    // age restarts: response delay of 1 s
    assertThat(merged.currentAgeNanos(received)).isEqualTo(SECOND);
    assertThat(merged.isFresh(received + 30 * SECOND)).isTrue();
    assertThat(e.isFresh(received)).isFalse(); // the original is untouched
  }

  @Test
  void notModifiedForAnotherRepresentationUpdatesNothing() {
    CachedResponse e = Http.response("ETag", "\"v1\"", "Cache-Control", "max-age=10");
    assertThat(e.withNotModified(headers("ETag", "\"v2\""), T0, T0, WALL, 0)).isNull();
    assertThat(e.withNotModified(headers("ETag", "W/\"v1\""), T0, T0, WALL, 0)).isNotNull();
    CachedResponse weak = Http.response("ETag", "W/\"v1\"", "Cache-Control", "max-age=10");
    assertThat(weak.withNotModified(headers("ETag", "\"v1\""), T0, T0, WALL, 0))
        .as("a strong 304 validator never matches a weak stored one")
        .isNull();
    CachedResponse lm = Http.response("Last-Modified", LM, "Cache-Control", "max-age=10");
    assertThat(lm.withNotModified(headers("Last-Modified", LM), T0, T0, WALL, 0)).isNotNull();
    assertThat(
            lm.withNotModified(
                headers("Last-Modified", "Tue, 14 Nov 2023 10:00:00 GMT"), T0, T0, WALL, 0))
        .isNull();
    assertThat(lm.withNotModified(headers(), T0, T0, WALL, 0)).isNotNull();
    assertThat(lm.withNotModified(headers("ETag", "\"v1\""), T0, T0, WALL, 0))
        .as("the 304 names an ETag the entry does not have")
        .isNull();
  }

  @Test
  void mergedEntryReplacesTheStoredOneInTheCache() {
    ResponseCache cache = new ResponseCache(1 << 20, 1 << 16, Runnable::run);
    CacheKey key = CacheKey.of("h", "/x");
    CachedResponse e = Http.response("ETag", "\"v1\"", "Cache-Control", "max-age=10");
    cache.store(key, e);
    long later = T0 + 60 * SECOND;
    assertThat(cache.lookup(key, headers(), later).kind()).isEqualTo(Lookup.Kind.STALE);
    CachedResponse merged =
        e.withNotModified(headers("ETag", "\"v1\""), later, later, WALL + 60_000, 0);
    cache.replace(key, e, merged);
    assertThat(cache.lookup(key, headers(), later).kind()).isEqualTo(Lookup.Kind.FRESH);
    // a merge that lost the race against invalidation does not resurrect the entry
    cache.invalidate(key);
    cache.replace(key, e, merged);
    assertThat(cache.lookup(key, headers(), later).kind()).isEqualTo(Lookup.Kind.MISS);
  }

  @Test
  void clientConditionalsAreAnsweredFromTheEntry() {
    CachedResponse e = Http.response("ETag", "W/\"v1\"", "Last-Modified", LM);
    assertThat(Revalidation.clientNotModified(headers("If-None-Match", "\"v1\""), e, WALL))
        .isTrue();
    assertThat(
            Revalidation.clientNotModified(headers("If-None-Match", "\"a,b\", W/\"v1\""), e, WALL))
        .isTrue();
    assertThat(Revalidation.clientNotModified(headers("If-None-Match", "*"), e, WALL)).isTrue();
    assertThat(Revalidation.clientNotModified(headers("If-None-Match", "\"v2\""), e, WALL))
        .isFalse();
    // If-None-Match decides; If-Modified-Since is then ignored
    assertThat(
            Revalidation.clientNotModified(
                headers("If-None-Match", "\"v2\"", "If-Modified-Since", LM), e, WALL))
        .isFalse();
    assertThat(Revalidation.clientNotModified(headers("If-Modified-Since", LM), e, WALL)).isTrue();
    assertThat(
            Revalidation.clientNotModified(
                headers("If-Modified-Since", "Sun, 12 Nov 2023 10:00:00 GMT"), e, WALL))
        .isFalse();
    assertThat(Revalidation.clientNotModified(headers("If-Modified-Since", "junk"), e, WALL))
        .isFalse();
    assertThat(Revalidation.clientNotModified(headers(), e, WALL)).isFalse();
  }
}
