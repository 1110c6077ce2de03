package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.SECOND;
import static dev.parapet.proxy.cache.Http.T0;
import static dev.parapet.proxy.cache.Http.WALL;
import static dev.parapet.proxy.cache.Http.headers;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.HttpDate;
import io.netty.handler.codec.http.HttpHeaders;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Stale only when someone permitted it (RFC 9111 §4.2.4) with the default configuration: no
 * operator stale-while-revalidate, the operator's stale-if-error only for an origin that could not
 * be reached; and heuristic freshness from Last-Modified (§4.2.2).
 */
class PermittedStaleTest {
  /** The defaults: stale_while_revalidate 0 s, stale_if_error 300 s on the unreachable triggers. */
  private final StalePolicy defaults =
      new StalePolicy(Duration.ZERO, Duration.ofSeconds(300), StaleTrigger.UNREACHABLE);

  private static final Heuristic TEN_PERCENT =
      new Heuristic(0, 0.10, Duration.ofHours(24).toNanos());

  private static Lookup staleBy(long seconds, String... pairs) {
    ResponseCache cache = new ResponseCache(1 << 20, 1 << 16, Runnable::run);
    CacheKey key = CacheKey.of("h", "/");
    cache.store(key, Http.response(pairs));
    CachedResponse e = cache.lookup(key, headers(), T0).requireEntry();
    Lookup l = cache.lookup(key, headers(), T0 + e.lifetimeNanos() + seconds * SECOND);
    assertThat(l.kind()).isEqualTo(Lookup.Kind.STALE);
    return l;
  }

  @Test
  void withoutAnyGrantAStaleResponseIsRevalidatedNotServed() {
    for (String[] pairs :
        new String[][] {
          {"Cache-Control", "max-age=0", "ETag", "\"a\""},
          {"Expires", HttpDate.format(WALL - 60_000)},
          {"Cache-Control", "max-age=10"},
        }) {
      assertThat(defaults.beforeOrigin(staleBy(1, pairs), headers()))
          .as("%s", String.join(" ", pairs))
          .isEqualTo(StaleDecision.REVALIDATE);
    }
  }

  @Test
  void theOriginsStaleWhileRevalidateGrantsIt() {
    Lookup l = staleBy(5, "Cache-Control", "max-age=0, stale-while-revalidate=10");
    assertThat(defaults.beforeOrigin(l, headers()))
        .isEqualTo(StaleDecision.REVALIDATE_IN_BACKGROUND);
  }

  @ParameterizedTest
  @EnumSource(
      value = StaleTrigger.class,
      names = {"TIMEOUT", "CONNECT_ERROR", "BREAKER_OPEN", "SHED", "POOL_LIMIT", "INCIDENT"})
  void theOperatorsStaleIfErrorCoversAnOriginThatCouldNotBeReached(StaleTrigger t) {
    CachedResponse e = staleBy(60, "Cache-Control", "max-age=10").requireEntry();
    assertThat(defaults.onError(e, t, T0 + 70 * SECOND)).isEqualTo(StaleDecision.SERVE_STALE);
  }

  @Test
  void anOrigin5xxNeedsTheResponsesOwnStaleIfErrorOrTheOperatorListingIt() {
    CachedResponse plain = staleBy(1, "Cache-Control", "max-age=10").requireEntry();
    long now = T0 + 20 * SECOND;
    assertThat(defaults.onError(plain, StaleTrigger.ORIGIN_5XX, now))
        .isEqualTo(StaleDecision.PASS_ERROR);
    CachedResponse granted =
        staleBy(1, "Cache-Control", "max-age=10, stale-if-error=60").requireEntry();
    assertThat(defaults.onError(granted, StaleTrigger.ORIGIN_5XX, now))
        .isEqualTo(StaleDecision.SERVE_STALE);
    StalePolicy with5xx =
        new StalePolicy(
            Duration.ZERO,
            Duration.ofSeconds(300),
            java.util.EnumSet.of(StaleTrigger.ORIGIN_5XX, StaleTrigger.TIMEOUT));
    assertThat(with5xx.onError(plain, StaleTrigger.ORIGIN_5XX, now))
        .isEqualTo(StaleDecision.SERVE_STALE);
    assertThat(with5xx.onError(plain, StaleTrigger.BREAKER_OPEN, now))
        .isEqualTo(StaleDecision.PASS_ERROR);
  }

  @Test
  void neverForResponsesThatForbidStaleWhateverTheGrant() {
    for (String cc :
        new String[] {
          "max-age=10, must-revalidate, stale-if-error=600",
          "max-age=10, proxy-revalidate, stale-if-error=600",
          "s-maxage=10, stale-if-error=600",
          "max-age=10, no-cache, stale-if-error=600"
        }) {
      CachedResponse e = staleBy(1, "Cache-Control", cc).requireEntry();
      assertThat(defaults.onError(e, StaleTrigger.TIMEOUT, T0 + 20 * SECOND))
          .as(cc)
          .isEqualTo(StaleDecision.GATEWAY_TIMEOUT);
      assertThat(defaults.onError(e, StaleTrigger.ORIGIN_5XX, T0 + 20 * SECOND))
          .as(cc)
          .isEqualTo(StaleDecision.PASS_ERROR);
    }
  }

  @Test
  void heuristicFreshnessIsAFractionOfTheTimeSinceLastModifiedCapped() {
    HttpHeaders tenDaysOld =
        headers(
            "Date", HttpDate.format(WALL), "Last-Modified", HttpDate.format(WALL - 864_000_000L));
    CachedResponse e =
        CachedResponse.of(200, tenDaysOld, new byte[0], headers(), T0, T0, WALL, TEN_PERCENT);
    assertThat(e.lifetimeNanos()).isEqualTo(86_400 * SECOND); // 10 % of ten days: one day
    HttpHeaders aYearOld =
        headers(
            "Date",
            HttpDate.format(WALL),
            "Last-Modified",
            HttpDate.format(WALL - 365L * 86_400_000L));
    assertThat(
            CachedResponse.of(200, aYearOld, new byte[0], headers(), T0, T0, WALL, TEN_PERCENT)
                .lifetimeNanos())
        .isEqualTo(Duration.ofHours(24).toNanos()); // capped
    // not for a status that is not heuristically cacheable, nor with explicit freshness
    assertThat(
            CachedResponse.of(302, tenDaysOld, new byte[0], headers(), T0, T0, WALL, TEN_PERCENT)
                .lifetimeNanos())
        .isZero();
    HttpHeaders explicit = tenDaysOld.copy().set("Cache-Control", "max-age=5");
    assertThat(
            CachedResponse.of(200, explicit, new byte[0], headers(), T0, T0, WALL, TEN_PERCENT)
                .lifetimeNanos())
        .isEqualTo(5 * SECOND);
    // the route's default_ttl is the heuristic when set
    assertThat(
            CachedResponse.of(
                    200,
                    tenDaysOld,
                    new byte[0],
                    headers(),
                    T0,
                    T0,
                    WALL,
                    TEN_PERCENT.withDefaultTtl(7 * SECOND))
                .lifetimeNanos())
        .isEqualTo(7 * SECOND);
  }

  @Test
  void datesAreReadCaseInsensitively() {
    String expires = HttpDate.format(WALL + 60_000).toLowerCase(java.util.Locale.ROOT);
    HttpHeaders h = headers("Date", HttpDate.format(WALL).toUpperCase(java.util.Locale.ROOT));
    h.set("Expires", expires);
    CachedResponse e = CachedResponse.of(200, h, new byte[0], headers(), T0, T0, WALL, 0);
    assertThat(e.lifetimeNanos()).isEqualTo(60 * SECOND);
  }

  @Test
  void aHeuristicallyFreshResponseIsStorableAndAFutureLastModifiedIsNot() {
    HttpHeaders old =
        headers(
            "Date", HttpDate.format(WALL), "Last-Modified", HttpDate.format(WALL - 864_000_000L));
    assertThat(
            Storability.of(
                io.netty.handler.codec.http.HttpMethod.GET, headers(), 200, old, TEN_PERCENT, WALL))
        .isEqualTo(Storability.STORE);
    assertThat(
            Storability.of(
                io.netty.handler.codec.http.HttpMethod.GET,
                headers(),
                200,
                old,
                Heuristic.NONE,
                WALL))
        .isEqualTo(Storability.NO_FRESHNESS);
    HttpHeaders future =
        headers("Date", HttpDate.format(WALL), "Last-Modified", HttpDate.format(WALL + 60_000));
    assertThat(
            Storability.of(
                io.netty.handler.codec.http.HttpMethod.GET,
                headers(),
                200,
                future,
                TEN_PERCENT,
                WALL))
        .isEqualTo(Storability.NO_FRESHNESS);
  }
}
