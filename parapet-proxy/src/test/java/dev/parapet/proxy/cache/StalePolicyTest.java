package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.SECOND;
import static dev.parapet.proxy.cache.Http.T0;
import static dev.parapet.proxy.cache.Http.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.handler.codec.http.HttpHeaders;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** RFC 5861 stale-while-revalidate / stale-if-error, RFC 9111 §4.2.4 and §5.2.2.2. */
class StalePolicyTest {
  /**
   * Operator windows on every trigger: stale_while_revalidate 60 s, stale_if_error 300 s (the
   * defaults are in PermittedStaleTest).
   */
  private final StalePolicy policy =
      new StalePolicy(Duration.ofSeconds(60), Duration.ofSeconds(300));

  private static Lookup staleBy(long seconds, HttpHeaders request, String... pairs) {
    ResponseCache cache = new ResponseCache(1 << 20, 1 << 16, Runnable::run);
    CacheKey key = CacheKey.of("h", "/");
    cache.store(key, Http.response(pairs));
    CachedResponse e = cache.lookup(key, headers(), T0).requireEntry();
    Lookup l = cache.lookup(key, request, T0 + e.lifetimeNanos() + seconds * SECOND);
    assertThat(l.kind()).isEqualTo(Lookup.Kind.STALE);
    return l;
  }

  private static Lookup staleBy(long seconds, String... pairs) {
    return staleBy(seconds, headers(), pairs);
  }

  @Test
  void staleWhileRevalidateFromTheDefaultWindow() {
    assertThat(policy.beforeOrigin(staleBy(59, "Cache-Control", "max-age=10"), headers()))
        .isEqualTo(StaleDecision.REVALIDATE_IN_BACKGROUND);
    assertThat(policy.beforeOrigin(staleBy(60, "Cache-Control", "max-age=10"), headers()))
        .isEqualTo(StaleDecision.REVALIDATE_IN_BACKGROUND);
    assertThat(policy.beforeOrigin(staleBy(61, "Cache-Control", "max-age=10"), headers()))
        .isEqualTo(StaleDecision.REVALIDATE);
  }

  @Test
  void staleWhileRevalidateFromTheResponseDirectiveWinsBothWays() {
    String longer = "max-age=10, stale-while-revalidate=600";
    assertThat(policy.beforeOrigin(staleBy(500, "Cache-Control", longer), headers()))
        .isEqualTo(StaleDecision.REVALIDATE_IN_BACKGROUND);
    String none = "max-age=10, stale-while-revalidate=0";
    assertThat(policy.beforeOrigin(staleBy(1, "Cache-Control", none), headers()))
        .isEqualTo(StaleDecision.REVALIDATE);
    assertThat(StaleDecision.REVALIDATE_IN_BACKGROUND.servesStale()).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "max-age=10, must-revalidate",
        "max-age=10, proxy-revalidate",
        "s-maxage=10",
        "max-age=10, no-cache"
      })
  void directivesThatForbidStaleForceRevalidation(String cc) {
    Lookup l = staleBy(1, "Cache-Control", cc + ", stale-while-revalidate=600");
    assertThat(policy.beforeOrigin(l, headers())).isEqualTo(StaleDecision.REVALIDATE);
    assertThat(policy.beforeOrigin(l, headers("Cache-Control", "max-stale")))
        .isEqualTo(StaleDecision.REVALIDATE);
  }

  @Test
  void requestMaxStaleServesStaleWithoutRefresh() {
    HttpHeaders req = headers("Cache-Control", "max-stale=120");
    assertThat(policy.beforeOrigin(staleBy(100, req, "Cache-Control", "max-age=10"), req))
        .isEqualTo(StaleDecision.SERVE_STALE);
    assertThat(policy.beforeOrigin(staleBy(130, req, "Cache-Control", "max-age=10"), req))
        .isEqualTo(StaleDecision.REVALIDATE);
  }

  @Test
  void requestNoCacheOrMaxAgeRefusesStale() {
    HttpHeaders noCache = headers("Cache-Control", "no-cache");
    assertThat(policy.beforeOrigin(staleBy(1, noCache, "Cache-Control", "max-age=10"), noCache))
        .isEqualTo(StaleDecision.REVALIDATE);
    HttpHeaders maxAge = headers("Cache-Control", "max-age=5");
    assertThat(policy.beforeOrigin(staleBy(1, maxAge, "Cache-Control", "max-age=10"), maxAge))
        .isEqualTo(StaleDecision.REVALIDATE);
  }

  @Test
  void onlyIfCachedNeverGoesToTheOrigin() {
    HttpHeaders req = headers("Cache-Control", "only-if-cached");
    assertThat(policy.beforeOrigin(staleBy(1, req, "Cache-Control", "max-age=10"), req))
        .isEqualTo(StaleDecision.REVALIDATE_IN_BACKGROUND);
    assertThat(policy.beforeOrigin(staleBy(100, req, "Cache-Control", "max-age=10"), req))
        .isEqualTo(StaleDecision.GATEWAY_TIMEOUT);
    HttpHeaders strict = headers("Cache-Control", "only-if-cached, no-cache");
    assertThat(policy.beforeOrigin(staleBy(1, strict, "Cache-Control", "max-age=10"), strict))
        .isEqualTo(StaleDecision.GATEWAY_TIMEOUT);
  }

  @ParameterizedTest
  @EnumSource(StaleTrigger.class)
  void staleIfErrorServesForEveryTriggerWithinTheDefaultWindow(StaleTrigger trigger) {
    CachedResponse e = Http.response("Cache-Control", "max-age=10");
    long end = T0 + 10 * SECOND;
    assertThat(policy.onError(e, trigger, end + 299 * SECOND)).isEqualTo(StaleDecision.SERVE_STALE);
    assertThat(policy.onError(e, trigger, end + 300 * SECOND)).isEqualTo(StaleDecision.SERVE_STALE);
    assertThat(policy.onError(e, trigger, end + 301 * SECOND)).isEqualTo(StaleDecision.PASS_ERROR);
  }

  @ParameterizedTest
  @EnumSource(StaleTrigger.class)
  void staleIfErrorDirectiveWinsOverTheDefault(StaleTrigger trigger) {
    CachedResponse longer = Http.response("Cache-Control", "max-age=10, stale-if-error=86400");
    assertThat(policy.onError(longer, trigger, T0 + 3600 * SECOND))
        .isEqualTo(StaleDecision.SERVE_STALE);
    CachedResponse off = Http.response("Cache-Control", "max-age=10, stale-if-error=0");
    assertThat(policy.onError(off, trigger, T0 + 11 * SECOND)).isEqualTo(StaleDecision.PASS_ERROR);
  }

  @ParameterizedTest
  @EnumSource(StaleTrigger.class)
  void mustRevalidateForbidsStaleOnEveryTrigger(StaleTrigger trigger) {
    for (String cc :
        new String[] {
          "max-age=10, must-revalidate, stale-if-error=600",
          "max-age=10, proxy-revalidate",
          "s-maxage=10, stale-if-error=600",
          "max-age=10, no-cache"
        }) {
      CachedResponse e = Http.response("Cache-Control", cc);
      StaleDecision d = policy.onError(e, trigger, T0 + 20 * SECOND);
      // the origin's own 5xx is forwarded; an unreachable origin is a 504 (RFC 9111 §5.2.2.2)
      assertThat(d)
          .as("%s with %s", trigger, cc)
          .isEqualTo(
              trigger == StaleTrigger.ORIGIN_5XX
                  ? StaleDecision.PASS_ERROR
                  : StaleDecision.GATEWAY_TIMEOUT);
      assertThat(d.servesStale()).isFalse();
    }
  }

  @Test
  void triggerForStatusCoversTheRfc5861Errors() {
    for (int s : new int[] {500, 502, 503, 504}) {
      assertThat(StaleTrigger.forStatus(s)).isEqualTo(StaleTrigger.ORIGIN_5XX);
    }
    for (int s : new int[] {200, 404, 429, 501, 505}) {
      assertThat(StaleTrigger.forStatus(s)).isNull();
    }
    assertThat(StaleTrigger.BREAKER_OPEN.detail()).isEqualTo("breaker-open");
  }

  @Test
  void rejectsNegativeWindows() {
    assertThatThrownBy(() -> new StalePolicy(Duration.ofSeconds(-1), Duration.ZERO))
        .hasMessageContaining("expected: >= 0");
  }
}
