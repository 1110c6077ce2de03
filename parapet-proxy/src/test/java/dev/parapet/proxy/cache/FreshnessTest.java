package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.SECOND;
import static dev.parapet.proxy.cache.Http.T0;
import static dev.parapet.proxy.cache.Http.WALL;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.HttpDate;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;

/** RFC 9111 §4.2.1 (lifetime) and §4.2.3 (age). */
class FreshnessTest {

  private static long lifetime(int status, long defaultTtlNanos, String... pairs) {
    HttpHeaders h = Http.headers(pairs);
    return Freshness.lifetimeNanos(status, CacheControl.of(h), h, WALL, WALL, defaultTtlNanos);
  }

  private static String date(long offsetSeconds) {
    return HttpDate.format(WALL + offsetSeconds * 1000);
  }

  @Test
  void sMaxAgeBeatsMaxAgeBeatsExpires() {
    assertThat(lifetime(200, 0, "Cache-Control", "max-age=60, s-maxage=300", "Expires", date(10)))
        .isEqualTo(300 * SECOND);
    assertThat(lifetime(200, 0, "Cache-Control", "max-age=60", "Expires", date(10)))
        .isEqualTo(60 * SECOND);
    assertThat(lifetime(200, 0, "Expires", date(10))).isEqualTo(10 * SECOND);
  }

  @Test
  void expiresIsMeasuredFromDateNotFromNow() {
    // §4.2.1: freshness_lifetime = Expires - Date; a Date 100 s before the Expires gives 100 s
    HttpHeaders h = Http.headers("Expires", date(100));
    long lifetime = Freshness.lifetimeNanos(200, CacheControl.EMPTY, h, WALL, WALL + 50_000, 0);
    assertThat(lifetime).isEqualTo(100 * SECOND);
  }

  @Test
  void invalidOrRepeatedOrPastExpiresIsAlreadyExpired() {
    assertThat(lifetime(200, 60 * SECOND, "Expires", "0")).isZero();
    assertThat(lifetime(200, 60 * SECOND, "Expires", "yesterday")).isZero();
    assertThat(lifetime(200, 60 * SECOND, "Expires", date(10), "Expires", date(20))).isZero();
    assertThat(lifetime(200, 0, "Expires", date(-10))).isZero();
  }

  @Test
  void routeDefaultOnlyForHeuristicallyCacheableOrPublic() {
    assertThat(lifetime(200, 60 * SECOND)).isEqualTo(60 * SECOND);
    assertThat(lifetime(404, 60 * SECOND)).isEqualTo(60 * SECOND);
    assertThat(lifetime(302, 60 * SECOND)).isZero();
    assertThat(lifetime(500, 60 * SECOND)).isZero();
    assertThat(lifetime(302, 60 * SECOND, "Cache-Control", "public")).isEqualTo(60 * SECOND);
    assertThat(lifetime(200, 0)).isZero(); // no other heuristic
  }

  @Test
  void heuristicallyCacheableStatusesOfRfc9110() {
    for (int s : new int[] {200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501}) {
      assertThat(Freshness.isHeuristicallyCacheable(s)).as("%d", s).isTrue();
    }
    for (int s : new int[] {201, 302, 303, 307, 400, 403, 500, 502, 503}) {
      assertThat(Freshness.isHeuristicallyCacheable(s)).as("%d", s).isFalse();
    }
  }

  @Test
  void ageFromAgeHeaderPlusResponseDelay() {
    // corrected_age_value = age_value + response_delay = 10 s + 2 s
    long age = Freshness.initialAgeNanos("10", WALL, T0, T0 + 2 * SECOND, WALL);
    assertThat(age).isEqualTo(12 * SECOND);
  }

  @Test
  void apparentAgeFromDateWinsWhenLarger() {
    // Date 30 s before receipt, Age 5: apparent_age 30 s > corrected_age_value 5 s
    long age = Freshness.initialAgeNanos("5", WALL - 30_000, T0, T0, WALL);
    assertThat(age).isEqualTo(30 * SECOND);
  }

  @Test
  void aDateInTheFutureIsApparentAgeZero() {
    long age = Freshness.initialAgeNanos(null, WALL + 60_000, T0, T0 + SECOND, WALL);
    assertThat(age).isEqualTo(SECOND);
  }

  @Test
  void invalidAgeIsIgnoredAndAListUsesItsFirstMember() {
    assertThat(Freshness.parseAgeSeconds("abc")).isEqualTo(-1);
    assertThat(Freshness.parseAgeSeconds("-3")).isEqualTo(-1);
    assertThat(Freshness.parseAgeSeconds("7, 9")).isEqualTo(7);
    assertThat(Freshness.parseAgeSeconds(" 42 ")).isEqualTo(42);
    assertThat(Freshness.initialAgeNanos("abc", WALL, T0, T0, WALL)).isZero();
  }

  @Test
  void currentAgeGrowsWithResidentTimeAcrossNanoTimeWrapAround() {
    CachedResponse r = Http.response("Cache-Control", "max-age=10", "Age", "3");
    assertThat(r.currentAgeNanos(T0)).isEqualTo(3 * SECOND);
    long later = T0 + 6 * SECOND; // wraps past Long.MAX_VALUE
    assertThat(later).isNegative();
    assertThat(r.currentAgeNanos(later)).isEqualTo(9 * SECOND);
    assertThat(r.isFresh(later)).isTrue();
    assertThat(r.ageSeconds(later)).isEqualTo(9);
    assertThat(r.ttlSeconds(later)).isEqualTo(1);
    assertThat(r.isFresh(T0 + 7 * SECOND)).isFalse();
    // age 3 + 50 resident = 53 s against a 10 s lifetime
    assertThat(r.ttlSeconds(T0 + 50 * SECOND)).isEqualTo(-43);
    assertThat(r.stalenessNanos(T0 + 50 * SECOND)).isEqualTo(43 * SECOND);
  }

  @Test
  void ttlRoundsTowardNegativeInfinity() {
    assertThat(Freshness.ttlSeconds(10 * SECOND, 10 * SECOND + 1)).isEqualTo(-1);
    assertThat(Freshness.ttlSeconds(10 * SECOND, 9 * SECOND + 1)).isZero();
    assertThat(Freshness.ttlSeconds(10 * SECOND, 0)).isEqualTo(10);
  }

  @Test
  void storedResponseWithoutDateGetsTheReceiptTime() {
    HttpHeaders h = Http.headers("Cache-Control", "max-age=5");
    CachedResponse r = CachedResponse.of(200, h, new byte[0], Http.headers(), T0, T0, WALL, 0);
    assertThat(r.headers().get("Date")).isEqualTo(HttpDate.format(WALL));
    assertThat(r.headers().contains("Age")).isFalse();
    assertThat(r.lifetimeNanos()).isEqualTo(5 * SECOND);
  }
}
