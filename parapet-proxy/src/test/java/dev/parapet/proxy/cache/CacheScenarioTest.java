package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.SECOND;
import static dev.parapet.proxy.cache.Http.T0;
import static dev.parapet.proxy.cache.Http.WALL;
import static dev.parapet.proxy.cache.Http.headers;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.HttpDate;
import dev.parapet.proxy.cache.Collapser.Role;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The components composed the way docs/cache.md says the request path will use them, over one
 * object's life: miss and store, fresh hit, stale-while-revalidate with one background refresh, a
 * 304 merge, the origin going down behind an open breaker (stale served), and past the window.
 */
class CacheScenarioTest {
  private final ResponseCache cache = new ResponseCache(1 << 20, Runnable::run);
  private final StalePolicy policy =
      new StalePolicy(Duration.ofSeconds(60), Duration.ofSeconds(300));
  private final Collapser<CacheKey, CachedResponse> collapser = new Collapser<>(64);
  private final CacheKey key = CacheKey.of("shop.example.com", "/static/logo.png");
  private final HttpHeaders request = headers("Accept", "*/*");

  private CachedResponse originAnswers(long sent, long received, long wall) {
    HttpHeaders h =
        headers(
            "Cache-Control", "max-age=30",
            "ETag", "\"logo-1\"",
            "Date", HttpDate.format(wall),
            "Content-Type", "image/png");
    assertThat(Storability.of(HttpMethod.GET, request, 200, h, 0)).isEqualTo(Storability.STORE);
    return CachedResponse.of(200, h, new byte[1024], request, sent, received, wall, 0);
  }

  @Test
  void oneObjectsLife() {
    // 1. miss: one leader fetches, a concurrent miss waits, both end with the stored response
    assertThat(cache.lookup(key, request, T0).kind()).isEqualTo(Lookup.Kind.MISS);
    List<CachedResponse> delivered = new ArrayList<>();
    var leader = collapser.join(key, leaderSelf());
    var waiter =
        collapser.join(
            key,
            new Collapser.Waiter<>() {
              @Override
              public void onSuccess(CachedResponse value) {
                delivered.add(value);
              }

              @Override
              public void onFailure(Throwable cause) {
                throw new AssertionError(cause);
              }
            });
    assertThat(leader.role()).isEqualTo(Role.LEADER);
    assertThat(waiter.role()).isEqualTo(Role.WAITER);
    CachedResponse stored = originAnswers(T0, T0 + SECOND / 10, WALL);
    assertThat(cache.store(key, stored)).isTrue();
    leader.flight().complete(stored);
    assertThat(delivered).containsExactly(stored);
    assertThat(delivered.get(0).matchesVariant(request)).isTrue();
    assertThat(
            CacheStatus.of("edge-1").fwd(CacheStatus.Fwd.MISS).fwdStatus(200).stored().toString())
        .isEqualTo("edge-1; fwd=miss; fwd-status=200; stored");

    // 2. fresh hit 10 s later
    Lookup hit = cache.lookup(key, request, T0 + 10 * SECOND);
    assertThat(hit.kind()).isEqualTo(Lookup.Kind.FRESH);
    assertThat(CacheStatus.of("edge-1").hit().ttl(hit.ttlSeconds()).toString())
        .isEqualTo("edge-1; hit; ttl=20"); // age 0.1 s at receipt + 9.9 s resident

    // 3. 40 s: stale by ~10 s, inside the 60 s default SWR window: serve and refresh once
    long t40 = T0 + 40 * SECOND;
    Lookup stale = cache.lookup(key, request, t40);
    assertThat(policy.beforeOrigin(stale, request))
        .isEqualTo(StaleDecision.REVALIDATE_IN_BACKGROUND);
    assertThat(collapser.inFlight(key)).isFalse();
    var refresh = collapser.join(key, leaderSelf());
    assertThat(refresh.role()).isEqualTo(Role.LEADER);
    assertThat(collapser.inFlight(key)).as("a second stale hit starts no second refresh").isTrue();
    HttpHeaders conditional = headers();
    assertThat(Revalidation.addValidators(stale.requireEntry(), conditional)).isTrue();
    assertThat(conditional.get("If-None-Match")).isEqualTo("\"logo-1\"");

    // ... the origin answers 304: merge, swap in, end the flight
    CachedResponse merged =
        stale
            .requireEntry()
            .withNotModified(
                headers("ETag", "\"logo-1\"", "Cache-Control", "max-age=30"),
                t40,
                t40 + SECOND / 10,
                WALL + 40_000,
                0);
    assertThat(merged).isNotNull();
    cache.replace(key, stale.requireEntry(), merged);
    refresh.flight().complete(merged);
    assertThat(cache.lookup(key, request, t40 + SECOND).kind()).isEqualTo(Lookup.Kind.FRESH);

    // 4. the origin goes down; the breaker opens. At 100 s the entry is 30 s stale, inside SWR:
    // the client gets it at once; the background refresh is refused by the breaker (no harm)
    long t100 = T0 + 100 * SECOND;
    Lookup swr = cache.lookup(key, request, t100);
    assertThat(swr.ttlSeconds()).isEqualTo(-30);
    assertThat(policy.beforeOrigin(swr, request)).isEqualTo(StaleDecision.REVALIDATE_IN_BACKGROUND);

    // At 150 s (80 s stale, past SWR) the client would wait for the origin, but the breaker is
    // open: stale-if-error covers it
    long t150 = T0 + 150 * SECOND;
    Lookup down = cache.lookup(key, request, t150);
    assertThat(policy.beforeOrigin(down, request)).isEqualTo(StaleDecision.REVALIDATE);
    StaleDecision onBreaker = policy.onError(down.requireEntry(), StaleTrigger.BREAKER_OPEN, t150);
    assertThat(onBreaker).isEqualTo(StaleDecision.SERVE_STALE);
    assertThat(
            CacheStatus.of("edge-1")
                .hit()
                .ttl(down.ttlSeconds())
                .detail("stale " + StaleTrigger.BREAKER_OPEN.detail())
                .toString())
        .isEqualTo("edge-1; hit; ttl=-80; detail=\"stale breaker-open\"");

    // 5. 200 s: past SWR, the request must wait for the origin, which times out: stale-if-error
    long t200 = T0 + 200 * SECOND;
    Lookup late = cache.lookup(key, request, t200);
    assertThat(policy.beforeOrigin(late, request)).isEqualTo(StaleDecision.REVALIDATE);
    assertThat(policy.onError(late.requireEntry(), StaleTrigger.TIMEOUT, t200))
        .isEqualTo(StaleDecision.SERVE_STALE);

    // 6. past freshness + 300 s: the error is answered as if there were no cache
    long t400 = T0 + 400 * SECOND;
    assertThat(
            policy.onError(
                cache.lookup(key, request, t400).requireEntry(), StaleTrigger.CONNECT_ERROR, t400))
        .isEqualTo(StaleDecision.PASS_ERROR);

    // 7. a PUT to the object invalidates it
    cache.invalidateAfter(HttpMethod.PUT, key, 204, null, null);
    assertThat(cache.lookup(key, request, t400).kind()).isEqualTo(Lookup.Kind.MISS);
    assertThat(collapser.misuseTotal()).isZero();
  }

  /** A leader's own waiter: never called (the leader handles its response itself). */
  private static Collapser.Waiter<CachedResponse> leaderSelf() {
    return new Collapser.Waiter<>() {
      @Override
      public void onSuccess(CachedResponse value) {
        throw new AssertionError("leader's waiter called");
      }

      @Override
      public void onFailure(Throwable cause) {
        throw new AssertionError("leader's waiter called");
      }
    };
  }
}
