package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.SECOND;
import static dev.parapet.proxy.cache.Http.T0;
import static dev.parapet.proxy.cache.Http.WALL;
import static dev.parapet.proxy.cache.Http.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.HttpDate;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ResponseCacheTest {
  private static final CacheKey KEY = CacheKey.of("shop.example.com", "/static/app.js");

  private final ResponseCache cache = new ResponseCache(1 << 20, 1 << 18, Runnable::run);

  private static CachedResponse stored(HttpHeaders request, String body, String... pairs) {
    HttpHeaders h = headers(pairs);
    h.set("Date", HttpDate.format(WALL));
    return CachedResponse.of(
        200, h, body.getBytes(StandardCharsets.UTF_8), request, T0, T0, WALL, 0);
  }

  @Test
  void freshThenStaleThenMiss() {
    assertThat(cache.lookup(KEY, headers(), T0)).isSameAs(Lookup.MISS);
    cache.store(KEY, stored(headers(), "v1", "Cache-Control", "max-age=10"));

    Lookup fresh = cache.lookup(KEY, headers(), T0 + 4 * SECOND);
    assertThat(fresh.kind()).isEqualTo(Lookup.Kind.FRESH);
    assertThat(fresh.ttlSeconds()).isEqualTo(6);
    assertThat(fresh.stalenessNanos()).isZero();

    Lookup stale = cache.lookup(KEY, headers(), T0 + 25 * SECOND);
    assertThat(stale.kind()).isEqualTo(Lookup.Kind.STALE);
    assertThat(stale.ttlSeconds()).isEqualTo(-15);
    assertThat(stale.stalenessNanos()).isEqualTo(15 * SECOND);
    assertThat(stale.requireEntry().body()).isEqualTo(java.nio.ByteBuffer.wrap("v1".getBytes()));

    assertThat(cache.lookup(CacheKey.of("shop.example.com", "/other"), headers(), T0).kind())
        .isEqualTo(Lookup.Kind.MISS);
    assertThatThrownBy(Lookup.MISS::requireEntry).hasMessageContaining("MISS");
  }

  @Test
  void responseNoCacheAlwaysNeedsValidation() {
    cache.store(KEY, stored(headers(), "v", "Cache-Control", "no-cache, max-age=60"));
    assertThat(cache.lookup(KEY, headers(), T0).kind()).isEqualTo(Lookup.Kind.STALE);
  }

  @Test
  void requestDirectivesCanRefuseAFreshEntry() {
    cache.store(KEY, stored(headers(), "v", "Cache-Control", "max-age=60"));
    long now = T0 + 30 * SECOND;
    assertThat(cache.lookup(KEY, headers("Cache-Control", "no-cache"), now).kind())
        .isEqualTo(Lookup.Kind.STALE);
    assertThat(cache.lookup(KEY, headers("Cache-Control", "max-age=10"), now).kind())
        .isEqualTo(Lookup.Kind.STALE);
    assertThat(cache.lookup(KEY, headers("Cache-Control", "max-age=30"), now).kind())
        .isEqualTo(Lookup.Kind.FRESH);
    assertThat(cache.lookup(KEY, headers("Cache-Control", "min-fresh=40"), now).kind())
        .isEqualTo(Lookup.Kind.STALE);
    assertThat(cache.lookup(KEY, headers("Cache-Control", "min-fresh=20"), now).kind())
        .isEqualTo(Lookup.Kind.FRESH);
  }

  @Test
  void varyKeepsOneVariantPerSecondaryKey() {
    HttpHeaders gzip = headers("Accept-Encoding", "gzip");
    HttpHeaders br = headers("Accept-Encoding", "br");
    cache.store(KEY, stored(gzip, "gz", "Vary", "Accept-Encoding", "Cache-Control", "max-age=60"));
    cache.store(KEY, stored(br, "br", "Vary", "Accept-Encoding", "Cache-Control", "max-age=60"));

    assertThat(body(cache.lookup(KEY, headers("accept-encoding", "GZIP"), T0))).isEqualTo("gz");
    assertThat(body(cache.lookup(KEY, br, T0))).isEqualTo("br");
    assertThat(cache.lookup(KEY, headers(), T0).kind()).isEqualTo(Lookup.Kind.MISS);
    assertThat(cache.lookup(KEY, headers("Accept-Encoding", "zstd"), T0).kind())
        .isEqualTo(Lookup.Kind.MISS);

    // a newer gzip response replaces the gzip variant only
    cache.store(KEY, stored(gzip, "gz2", "Vary", "Accept-Encoding", "Cache-Control", "max-age=60"));
    assertThat(body(cache.lookup(KEY, gzip, T0))).isEqualTo("gz2");
    assertThat(body(cache.lookup(KEY, br, T0))).isEqualTo("br");
  }

  @Test
  void aChangedVaryDropsTheOldVariants() {
    cache.store(
        KEY,
        stored(
            headers("Accept-Encoding", "br"),
            "br",
            "Vary",
            "Accept-Encoding",
            "Cache-Control",
            "max-age=60"));
    cache.store(KEY, stored(headers(), "plain", "Cache-Control", "max-age=60"));
    assertThat(body(cache.lookup(KEY, headers("Accept-Encoding", "br"), T0))).isEqualTo("plain");
  }

  @Test
  void variantsPerUriAreBounded() {
    for (int i = 0; i < ResponseCache.MAX_VARIANTS + 5; i++) {
      cache.store(
          KEY,
          stored(headers("X-V", "" + i), "b" + i, "Vary", "X-V", "Cache-Control", "max-age=60"));
    }
    int found = 0;
    for (int i = 0; i < ResponseCache.MAX_VARIANTS + 5; i++) {
      if (cache.lookup(KEY, headers("X-V", "" + i), T0).kind() != Lookup.Kind.MISS) {
        found++;
      }
    }
    assertThat(found).isEqualTo(ResponseCache.MAX_VARIANTS);
    // the newest survive
    assertThat(body(cache.lookup(KEY, headers("X-V", "" + (ResponseCache.MAX_VARIANTS + 4)), T0)))
        .isEqualTo("b" + (ResponseCache.MAX_VARIANTS + 4));
  }

  @Test
  void unsafeMethodsInvalidateTargetAndSameHostLocations() {
    CacheKey created = CacheKey.of("shop.example.com", "/items/7");
    CacheKey listed = CacheKey.of("shop.example.com", "/items?page=1");
    CacheKey foreign = CacheKey.of("other.example.com", "/items/7");
    for (CacheKey k : new CacheKey[] {KEY, created, listed, foreign}) {
      cache.store(k, stored(headers(), "x", "Cache-Control", "max-age=60"));
    }
    var invalidated =
        cache.invalidateAfter(
            HttpMethod.POST, KEY, 201, "/items/7", "http://other.example.com/items/7");
    assertThat(invalidated).containsExactly(KEY, created);
    assertThat(cache.lookup(KEY, headers(), T0).kind()).isEqualTo(Lookup.Kind.MISS);
    assertThat(cache.lookup(created, headers(), T0).kind()).isEqualTo(Lookup.Kind.MISS);
    assertThat(cache.lookup(foreign, headers(), T0).kind()).isEqualTo(Lookup.Kind.FRESH);
    assertThat(cache.lookup(listed, headers(), T0).kind()).isEqualTo(Lookup.Kind.FRESH);

    cache.invalidateAfter(HttpMethod.PUT, listed, 204, null, "items?page=1");
    assertThat(cache.lookup(listed, headers(), T0).kind()).isEqualTo(Lookup.Kind.MISS);
  }

  @Test
  void errorsAndSafeMethodsInvalidateNothing() {
    cache.store(KEY, stored(headers(), "x", "Cache-Control", "max-age=60"));
    assertThat(cache.invalidateAfter(HttpMethod.DELETE, KEY, 500, null, null)).isEmpty();
    assertThat(cache.invalidateAfter(HttpMethod.PATCH, KEY, 404, null, null)).isEmpty();
    assertThat(cache.invalidateAfter(HttpMethod.GET, KEY, 200, null, null)).isEmpty();
    assertThat(cache.lookup(KEY, headers(), T0).kind()).isEqualTo(Lookup.Kind.FRESH);
    assertThat(cache.invalidateAfter(HttpMethod.DELETE, KEY, 204, "::not a uri", null))
        .containsExactly(KEY);
  }

  @Test
  void objectsLargerThanTheObjectLimitAreNotStored() {
    ResponseCache small = new ResponseCache(100_000, 10_000, Runnable::run);
    CachedResponse big = stored(headers(), "x".repeat(20_000), "Cache-Control", "max-age=60");
    assertThat(small.store(KEY, big)).isFalse();
    assertThat(small.lookup(KEY, headers(), T0).kind()).isEqualTo(Lookup.Kind.MISS);
  }

  @Test
  void weightedSizeNeverExceedsTheBoundUnderAFloodOfLargeObjects() {
    long max = 4L << 20; // 4 MiB
    ResponseCache bounded = new ResponseCache(max, 512 << 10, Runnable::run);
    SplittableRandom random = new SplittableRandom(42);
    long storedBytes = 0;
    for (int i = 0; i < 400; i++) {
      int size = (64 << 10) + random.nextInt(448 << 10); // 64 KiB .. 512 KiB
      HttpHeaders h = headers("Cache-Control", "max-age=600", "Date", HttpDate.format(WALL));
      CachedResponse r = CachedResponse.of(200, h, new byte[size], headers(), T0, T0, WALL, 0);
      if (bounded.store(CacheKey.of("h", "/o/" + i), r)) {
        storedBytes += r.weight();
      }
      if (i % 50 == 49) {
        bounded.cleanUp();
        assertThat(bounded.weightedSizeBytes()).isLessThanOrEqualTo(max);
      }
    }
    bounded.cleanUp();
    assertThat(storedBytes).isGreaterThan(10 * max); // the flood really was larger than the cache
    assertThat(bounded.weightedSizeBytes()).isLessThanOrEqualTo(max).isPositive();
    assertThat(bounded.estimatedUris()).isBetween(1L, 400L);
  }

  @Test
  void defaultObjectLimitIsASixteenthOfTheCache() {
    ResponseCache c = new ResponseCache(160_000, Runnable::run);
    assertThat(c.store(KEY, stored(headers(), "x".repeat(9_000), "Cache-Control", "max-age=6")))
        .isTrue();
    assertThat(c.store(KEY, stored(headers(), "x".repeat(10_000), "Cache-Control", "max-age=6")))
        .isFalse();
  }

  @Test
  void rejectsNonsensicalBounds() {
    assertThatThrownBy(() -> new ResponseCache(0, 1, Runnable::run))
        .hasMessage("maxBytes : 0 (expected: > 0)");
    assertThatThrownBy(() -> new ResponseCache(10, 20, Runnable::run))
        .hasMessage("maxObjectBytes : 20 (expected: in (0, 10])");
  }

  private static String body(Lookup l) {
    var b = l.requireEntry().body();
    byte[] bytes = new byte[b.remaining()];
    b.get(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
