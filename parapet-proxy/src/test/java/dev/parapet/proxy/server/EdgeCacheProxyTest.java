package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.raw;
import static dev.parapet.proxy.testing.ProxyFixture.request;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.time.HttpDate;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.CacheKey;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.testing.CacheOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The edge cache on the request path, over real sockets on loopback with an origin the test
 * controls. Time is a ticker the test moves forward (the proxy's monotonic clock), so freshness and
 * staleness never depend on how fast this machine is.
 */
class EdgeCacheProxyTest {
  private static final String NAME = ProxyFixture.NAME;
  private final AtomicLong skew = new AtomicLong();
  private final Ticker ticker = () -> System.nanoTime() + skew.get();

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private void advanceSeconds(long s) {
    skew.addAndGet(Duration.ofSeconds(s).toNanos());
  }

  private ProxyServer proxy(CacheOrigin origin) throws InterruptedException {
    return proxy(origin.address(), Duration.ofSeconds(5), 64L * 1024 * 1024, Duration.ZERO);
  }

  /** A proxy with one caching route {@code r} on {@code /} and stale_while_revalidate 0. */
  private ProxyServer proxy(
      InetSocketAddress origin, Duration originTimeout, long maxBytes, Duration defaultTtl)
      throws InterruptedException {
    return proxy(origin, originTimeout, maxBytes, defaultTtl, 4096);
  }

  private ProxyServer proxy(
      InetSocketAddress origin,
      Duration originTimeout,
      long maxBytes,
      Duration defaultTtl,
      int maxRequests)
      throws InterruptedException {
    EdgeCache cache =
        new EdgeCache(
            NAME,
            new EdgeCache.Settings(maxBytes, Duration.ofSeconds(300), Duration.ZERO),
            Map.of("r", defaultTtl),
            Runnable::run,
            System::currentTimeMillis);
    return fx.proxy()
        .trustingLoopback() // waiters with a shorter Parapet-Deadline of their own
        .routes(route("r", "/", "o"))
        .origins(
            pool("o", origin)
                .timeout(originTimeout)
                .maxRequests(maxRequests)
                .breaker(BreakerPolicy.builder().minRequests(1000).build())
                .build())
        .cache(cache)
        .ticker(ticker)
        .start();
  }

  private static String cacheStatus(HttpResponse<?> r) {
    return r.headers().firstValue("Cache-Status").orElse("");
  }

  /** Two requests to one path; returns the second. */
  private HttpResponse<String> twice(ProxyServer p, String path, String... headers)
      throws IOException, InterruptedException {
    fx.get(p.port(), path, headers);
    return fx.get(p.port(), path, headers);
  }

  // ---------------------------------------------------------------------------------------------
  // Freshness and storing

  @Test
  void freshResponseIsServedFromTheCacheWithAgeAndCacheStatus() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60", "Age", "7");
    ProxyServer p = proxy(o);

    HttpResponse<String> first = fx.get(p.port(), "/a");
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(cacheStatus(first)).isEqualTo(NAME + "; fwd=miss; fwd-status=200; stored");
    advanceSeconds(3);
    HttpResponse<String> second = fx.get(p.port(), "/a");

    assertThat(o.count()).isEqualTo(1);
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(second.body()).isEqualTo(first.body()).isEqualTo("body of /a");
    // Age: the origin's 7 s plus the 3 s spent here (RFC 9111 §4.2.3), at least
    assertThat(Long.parseLong(second.headers().firstValue("Age").orElseThrow()))
        .isGreaterThanOrEqualTo(10);
    assertThat(cacheStatus(second)).startsWith(NAME + "; hit; ttl=");
    assertThat(second.headers().firstValue("Via").orElseThrow()).contains(NAME);
    assertThat(p.cache().total(EdgeCache.Status.HIT)).isEqualTo(1);
    assertThat(p.metrics().scrape()).contains("parapet_cache_total{status=\"hit\"} 1.0");
    String metrics = p.metrics().scrape();
    assertThat(metrics).contains("parapet_cache_entries{cache=\"" + NAME + "\"} 1.0");
    assertThat(metrics).containsPattern("parapet_cache_size_bytes\\{cache=\"" + NAME + "\"} [1-9]");
  }

  @Test
  void anExpiredResponseIsNotReused() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10", "ETag", "\"v1\"");
    o.status = 200;
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/a");
    advanceSeconds(11);
    o.headers("Cache-Control", "max-age=10"); // no validator now: a full response
    HttpResponse<String> r = fx.get(p.port(), "/a");
    assertThat(o.count()).isEqualTo(2);
    assertThat(cacheStatus(r)).isEqualTo(NAME + "; fwd=stale; fwd-status=200; stored");
  }

  @Test
  void sharedMaxAgeWinsOverMaxAge() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=0, s-maxage=60");
    ProxyServer p = proxy(o);
    HttpResponse<String> r = twice(p, "/s");
    assertThat(o.count()).isEqualTo(1);
    assertThat(cacheStatus(r)).contains("hit");
  }

  @Test
  void expiresGivesFreshnessAndAPastExpiresDoesNot() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Expires", HttpDate.format(System.currentTimeMillis() + 120_000));
    ProxyServer p = proxy(o);
    twice(p, "/future");
    assertThat(o.count()).isEqualTo(1);

    o.headers("Expires", HttpDate.format(System.currentTimeMillis() - 120_000));
    twice(p, "/past");
    assertThat(o.count()).isEqualTo(3);
  }

  @Test
  void responsesThatMustNotBeSharedAreNotStored() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    ProxyServer p = proxy(o);
    String[][] cases = {
      {"Cache-Control", "max-age=60, no-store"},
      {"Cache-Control", "max-age=60, private"},
      {"Cache-Control", "max-age=60", "Set-Cookie", "session=abc"},
      {"Cache-Control", "no-cache"},
    };
    int path = 0;
    for (String[] headers : cases) {
      o.headers(headers);
      int before = o.count();
      HttpResponse<String> r = twice(p, "/private/" + path++);
      assertThat(o.count()).as(String.join(" ", headers)).isEqualTo(before + 2);
      assertThat(cacheStatus(r)).as(String.join(" ", headers)).doesNotContain("stored");
    }
  }

  @Test
  void setCookieIsSharedOnlyWhenTheOriginSaysPublic() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "public, max-age=60", "Set-Cookie", "a=b");
    ProxyServer p = proxy(o);
    twice(p, "/pub");
    assertThat(o.count()).isEqualTo(1);
  }

  @Test
  void requestsWithAuthorizationAreNotSharedUnlessAllowed() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60");
    ProxyServer p = proxy(o);
    twice(p, "/auth", "Authorization", "Bearer x");
    assertThat(o.count()).isEqualTo(2);

    o.headers("Cache-Control", "s-maxage=60");
    twice(p, "/auth2", "Authorization", "Bearer x");
    assertThat(o.count()).isEqualTo(3);
  }

  @Test
  void routeDefaultTtlAppliesWhenTheOriginSaysNothing() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    ProxyServer p = proxy(o.address(), Duration.ofSeconds(5), 1 << 20, Duration.ofSeconds(30));
    twice(p, "/default");
    assertThat(o.count()).isEqualTo(1);
  }

  @Test
  void withoutFreshnessInformationNothingIsStored() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    ProxyServer p = proxy(o);
    HttpResponse<String> r = twice(p, "/nothing");
    assertThat(o.count()).isEqualTo(2);
    assertThat(cacheStatus(r)).isEqualTo(NAME + "; fwd=miss; fwd-status=200");
  }

  @Test
  void varySelectsTheVariantByTheRequestHeader() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60", "Vary", "Accept-Language");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/v", "Accept-Language", "en");
    fx.get(p.port(), "/v", "Accept-Language", "de");
    HttpResponse<String> en = fx.get(p.port(), "/v", "Accept-Language", "en");
    HttpResponse<String> de = fx.get(p.port(), "/v", "Accept-Language", "de");
    assertThat(o.count()).isEqualTo(2);
    assertThat(cacheStatus(en)).contains("hit");
    assertThat(cacheStatus(de)).contains("hit");
  }

  @Test
  void headIsAnsweredFromTheGetEntry() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60");
    ProxyServer p = proxy(o);
    HttpResponse<String> full = fx.get(p.port(), "/h");
    HttpResponse<String> head = fx.send(p.port(), "HEAD", "/h");
    assertThat(o.count()).isEqualTo(1);
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.body()).isEmpty();
    assertThat(head.headers().firstValue("Content-Length"))
        .contains(Integer.toString(full.body().length()));
    assertThat(cacheStatus(head)).contains("hit");
    // and the connection still works afterwards
    assertThat(fx.get(p.port(), "/h").body()).isEqualTo("body of /h");
  }

  @Test
  void aClientConditionalIsAnsweredFromTheEntry() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60", "ETag", "\"e1\"");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/c");
    HttpResponse<String> r = fx.get(p.port(), "/c", "If-None-Match", "\"e1\"");
    assertThat(r.statusCode()).isEqualTo(304);
    assertThat(o.count()).isEqualTo(1);
  }

  @Test
  void unsafeMethodsInvalidateTheTarget() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60");
    ProxyServer p = proxy(o);
    twice(p, "/item");
    assertThat(o.count()).isEqualTo(1);
    HttpResponse<String> post = fx.send(p.port(), "POST", "/item");
    assertThat(cacheStatus(post)).isEqualTo(NAME + "; fwd=method; fwd-status=200");
    assertThat(o.count()).isEqualTo(2);
    HttpResponse<String> after = fx.get(p.port(), "/item");
    assertThat(o.count()).isEqualTo(3);
    assertThat(cacheStatus(after)).contains("fwd=miss");
  }

  // ---------------------------------------------------------------------------------------------
  // Validation

  @Test
  void aStaleEntryIsRevalidatedWithItsEtag() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10", "ETag", "\"v1\"");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/e");
    advanceSeconds(20);

    HttpResponse<String> r = fx.get(p.port(), "/e");
    assertThat(o.count()).isEqualTo(2);
    assertThat(o.last().header("If-None-Match")).isEqualTo("\"v1\"");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("body of /e");
    assertThat(cacheStatus(r)).startsWith(NAME + "; fwd=stale; fwd-status=304; ttl=");
    assertThat(p.cache().total(EdgeCache.Status.REVALIDATED)).isEqualTo(1);

    // the 304 restarted freshness: the next request is a hit
    HttpResponse<String> hit = fx.get(p.port(), "/e");
    assertThat(o.count()).isEqualTo(2);
    assertThat(cacheStatus(hit)).contains("hit");
  }

  @Test
  void aStaleEntryIsRevalidatedWithItsLastModified() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    String lm = HttpDate.format(System.currentTimeMillis() - 3_600_000);
    o.headers("Cache-Control", "max-age=10", "Last-Modified", lm);
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/lm");
    advanceSeconds(20);
    HttpResponse<String> r = fx.get(p.port(), "/lm");
    assertThat(o.count()).isEqualTo(2);
    assertThat(o.last().header("If-Modified-Since")).isEqualTo(lm);
    assertThat(r.body()).isEqualTo("body of /lm");
    assertThat(cacheStatus(r)).contains("fwd-status=304");
  }

  @Test
  void aFreshEntryTheRequestRefusesIsValidatedAndMarkedRequest() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60", "ETag", "\"r1\"");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/nc");
    HttpResponse<String> r = fx.get(p.port(), "/nc", "Cache-Control", "max-age=0");
    assertThat(o.count()).isEqualTo(2);
    assertThat(o.last().header("If-None-Match")).isEqualTo("\"r1\"");
    assertThat(r.body()).isEqualTo("body of /nc");
    assertThat(cacheStatus(r)).startsWith(NAME + "; fwd=request; fwd-status=304");
  }

  // ---------------------------------------------------------------------------------------------
  // Serving stale

  @Test
  void staleWhileRevalidateServesAtOnceAndRefreshesOnceInTheBackground() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10, stale-while-revalidate=60", "ETag", "\"s1\"");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/swr");
    advanceSeconds(15);

    HttpResponse<String> stale = fx.get(p.port(), "/swr");
    assertThat(stale.statusCode()).isEqualTo(200);
    assertThat(stale.body()).isEqualTo("body of /swr");
    assertThat(cacheStatus(stale))
        .matches(NAME + "; hit; ttl=-\\d+; detail=stale-while-revalidate");

    await()
        .atMost(Duration.ofSeconds(20))
        .until(() ->
            p.cache()
                    .store()
                    .lookup(
                        dev.parapet.proxy.cache.CacheKey.of("127.0.0.1:" + p.port(), "/swr"),
                        new io.netty.handler.codec.http.DefaultHttpHeaders(),
                        ticker.read())
                    .kind()
                == dev.parapet.proxy.cache.Lookup.Kind.FRESH);
    assertThat(o.count()).isEqualTo(2);
    assertThat(o.last().header("If-None-Match")).isEqualTo("\"s1\"");
    HttpResponse<String> fresh = fx.get(p.port(), "/swr");
    assertThat(cacheStatus(fresh)).startsWith(NAME + "; hit; ttl=");
    assertThat(o.count()).isEqualTo(2);
    assertThat(p.cache().total(EdgeCache.Status.REFRESH)).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> p.cache().backgroundInFlight() == 0);
  }

  @Test
  void staleIsServedWhenTheOriginAnswers5xx() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/5xx");
    advanceSeconds(20);
    o.status = 503;
    o.headers("Cache-Control", "no-store");

    HttpResponse<String> r = fx.get(p.port(), "/5xx");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("body of /5xx");
    assertThat(cacheStatus(r))
        .matches(NAME + "; fwd=stale; fwd-status=503; ttl=-\\d+; detail=\"stale origin-5xx\"");
    assertThat(o.count()).isEqualTo(2);
    // the connection is still usable: the origin's 503 body was read and dropped
    assertThat(fx.get(p.port(), "/5xx").statusCode()).isEqualTo(200);
  }

  @Test
  void staleIsServedOnAnOriginTimeout() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10");
    ProxyServer p = proxy(o.address(), Duration.ofMillis(300), 1 << 20, Duration.ZERO);
    fx.get(p.port(), "/slow");
    advanceSeconds(20);
    o.delayMillis = 3_000;
    HttpResponse<String> r = fx.get(p.port(), "/slow");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("body of /slow");
    assertThat(cacheStatus(r)).contains("detail=\"stale timeout\"");
  }

  @Test
  void staleIsServedWhenTheOriginRefusesConnections() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/down");
    o.close();
    advanceSeconds(20);
    HttpResponse<String> r = fx.get(p.port(), "/down");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("body of /down");
    assertThat(cacheStatus(r)).contains("detail=\"stale connect-error\"");
  }

  @Test
  void staleIsServedInsteadOfAskingAnOpenBreaker() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/b");
    advanceSeconds(20);
    p.breakers().find(BreakerKey.of(Scope.ROUTE, "r")).forceOpen(ticker.read());

    HttpResponse<String> r = fx.get(p.port(), "/b");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("body of /b");
    assertThat(cacheStatus(r)).matches(NAME + "; hit; ttl=-\\d+; detail=\"stale breaker-open\"");
    assertThat(o.count()).isEqualTo(1);

    // without a stored response the open breaker answers as before
    HttpResponse<String> none = fx.get(p.port(), "/never-stored");
    assertThat(none.statusCode()).isEqualTo(503);
    assertThat(cacheStatus(none)).isEqualTo(NAME + "; fwd=miss");
    assertThat(none.headers().firstValue("Proxy-Status").orElseThrow()).contains("breaker open");
  }

  @Test
  void staleIsServedWhenTheOriginPoolIsFull() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10");
    ProxyServer p = proxy(o.address(), Duration.ofSeconds(5), 1 << 20, Duration.ZERO, 1);
    fx.get(p.port(), "/pl");
    advanceSeconds(20);
    o.delayMillis = 2_000;
    CompletableFuture<HttpResponse<String>> busy = fx.sendAsync(p.port(), "/occupies-the-slot");
    await().atMost(Duration.ofSeconds(10)).until(() -> o.count() == 2);

    HttpResponse<String> r = fx.get(p.port(), "/pl");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("body of /pl");
    assertThat(cacheStatus(r)).matches(NAME + "; hit; ttl=-\\d+; detail=\"stale pool-limit\"");
    assertThat(busy.get().statusCode()).isEqualTo(200);
  }

  @Test
  void duringAnIncidentAStaleCopyIsServedAtOnceAndRefreshedBehindIt() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/inc");
    advanceSeconds(20); // stale now, well inside stale-if-error (300 s)

    p.incident(true); // POST /admin/incident: tighten breakers, prefer stale
    HttpResponse<String> r = fx.get(p.port(), "/inc");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("body of /inc");
    assertThat(cacheStatus(r)).contains("hit").contains("stale incident");
    // The refresh goes behind the answer, once.
    await().atMost(Duration.ofSeconds(10)).until(() -> o.count() == 2);
    p.incident(false);
  }

  @Test
  void cacheHitsAreServedWhileAdmissionShedsEverythingElse() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/hot");
    p.admission()
        .overloadLevel(dev.parapet.core.overload.OverloadLevel.STOP_ACCEPTING, System.nanoTime());

    HttpResponse<String> hit = fx.get(p.port(), "/hot");
    HttpResponse<String> miss = fx.get(p.port(), "/cold");

    // Hits never take an admission slot (DESIGN: cache hits and stale serves bypass admission).
    assertThat(hit.statusCode()).isEqualTo(200);
    assertThat(cacheStatus(hit)).contains("hit");
    assertThat(miss.statusCode()).isEqualTo(503);
    assertThat(miss.headers().firstValue("Proxy-Status").orElseThrow())
        .contains("proxy_internal_response");
    assertThat(o.count()).isEqualTo(1);
  }

  @Test
  void mustRevalidateGets504NotStale() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10, must-revalidate");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/mr");
    o.close();
    advanceSeconds(20);
    HttpResponse<String> r = fx.get(p.port(), "/mr");
    assertThat(r.statusCode()).isEqualTo(504);
    assertThat(r.body()).doesNotContain("body of /mr");
  }

  @Test
  void staleIfErrorWindowIsBoundedByTheResponseDirective() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10, stale-if-error=5");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/sie");
    o.close();
    advanceSeconds(30); // 20 s stale, window 5 s
    HttpResponse<String> r = fx.get(p.port(), "/sie");
    assertThat(r.statusCode()).isEqualTo(502);
  }

  // ---------------------------------------------------------------------------------------------
  // Collapsing and memory

  @Test
  void concurrentMissesMakeOneOriginRequest() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60");
    o.delayMillis = 1_000;
    ProxyServer p = proxy(o);
    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      // a client per request: one connection each, all in flight at once
      all.add(fx.sendAsyncOnNewConnection(request(p.port(), "/hot")));
    }
    int collapsed = 0;
    for (CompletableFuture<HttpResponse<String>> f : all) {
      HttpResponse<String> r = f.get();
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("body of /hot");
      if (cacheStatus(r).contains("collapsed") || cacheStatus(r).contains("hit")) {
        collapsed++;
      }
    }
    assertThat(o.count()).isEqualTo(1);
    assertThat(collapsed).isEqualTo(7);
  }

  @Test
  void aFailedLeaderReleasesItsWaitersToAnError() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60");
    o.delayMillis = 2_000;
    ProxyServer p = proxy(o.address(), Duration.ofMillis(500), 1 << 20, Duration.ZERO);
    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      all.add(fx.sendAsyncOnNewConnection(request(p.port(), "/fail")));
    }
    for (CompletableFuture<HttpResponse<String>> f : all) {
      assertThat(f.get().statusCode()).isEqualTo(504);
    }
  }

  /** Waits (bounded) until the origin has received {@code n} requests, and not more. */
  private static void awaitOriginCount(CacheOrigin o, int n) {
    await().atMost(Duration.ofSeconds(10)).until(() -> o.count() >= n);
    assertThat(o.count()).isEqualTo(n);
  }

  @Test
  void aWaiterWithAShorterDeadlineIsAnsweredAtItsOwnDeadlineNotTheLeaders() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60");
    o.delayMillis = 2_000;
    ProxyServer p = proxy(o);
    CompletableFuture<HttpResponse<String>> leader =
        fx.sendAsyncOnNewConnection(request(p.port(), "/slow"));
    awaitOriginCount(o, 1);

    HttpResponse<String> waiter = fx.get(p.port(), "/slow", "Parapet-Deadline", "400");

    assertThat(leader).isNotDone(); // the origin holds the leader for 2 s
    assertThat(waiter.statusCode()).isEqualTo(504);
    assertThat(waiter.headers().firstValue("Proxy-Status").orElse(""))
        .contains("http_response_timeout");
    assertThat(leader.get().statusCode()).isEqualTo(200);
    assertThat(o.count()).isEqualTo(1); // the waiter never went to the origin itself
    assertThat(fx.get(p.port(), "/slow").statusCode())
        .isEqualTo(200); // the connection's next request
  }

  @Test
  void aWaiterWithAShorterDeadlineGetsTheStaleCopyAtItsDeadline() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/s");
    advanceSeconds(20);
    o.delayMillis = 2_000;
    CompletableFuture<HttpResponse<String>> leader =
        fx.sendAsyncOnNewConnection(request(p.port(), "/s"));
    awaitOriginCount(o, 2);

    HttpResponse<String> waiter = fx.get(p.port(), "/s", "Parapet-Deadline", "400");

    assertThat(leader).isNotDone();
    assertThat(waiter.statusCode()).isEqualTo(200);
    assertThat(waiter.body()).isEqualTo("body of /s");
    assertThat(cacheStatus(waiter)).contains("detail=\"stale timeout\"");
    assertThat(leader.get().statusCode()).isEqualTo(200);
  }

  @Test
  void whenTheLeadersClientLeavesItsWaitersFetchForThemselves() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60");
    o.delayMillis = 1_000;
    ProxyServer p = proxy(o);
    try (java.net.Socket leader = new java.net.Socket("127.0.0.1", p.port())) {
      leader
          .getOutputStream()
          .write(
              ("GET /left HTTP/1.1\r\nHost: 127.0.0.1:" + p.port() + "\r\n\r\n")
                  .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
      await().atMost(Duration.ofSeconds(10)).until(() -> o.count() == 1);
      CompletableFuture<HttpResponse<String>> waiter = fx.sendAsync(p.port(), "/left");
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> p.cache().collapser().collapsedTotal() == 1);
      leader.close(); // the leader's client gives up while its fetch is in flight

      HttpResponse<String> r = waiter.get();
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("body of /left");
      assertThat(cacheStatus(r)).doesNotContain("collapsed");
    }
    assertThat(o.count()).isEqualTo(2);
    // the waiter's connection goes on normally: the response it fetched was stored
    assertThat(cacheStatus(fx.get(p.port(), "/left"))).contains("hit");
  }

  @Test
  void theByteBoundHoldsUnderAFloodOfLargeObjects() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=600");
    o.bodyBytes = 48 * 1024;
    long max = 1024 * 1024;
    ProxyServer p = proxy(o.address(), Duration.ofSeconds(5), max, Duration.ZERO);
    for (int i = 0; i < 60; i++) {
      HttpResponse<String> r = fx.get(p.port(), "/big/" + i);
      assertThat(r.body()).hasSize(48 * 1024);
      p.cache().store().cleanUp();
      assertThat(p.cache().store().weightedSizeBytes()).isLessThanOrEqualTo(max);
    }
    assertThat(p.cache().total(EdgeCache.Status.STORED)).isEqualTo(60);

    // larger than the largest object (a sixteenth): served, never stored
    o.bodyBytes = 100 * 1024;
    HttpResponse<String> huge = twice(p, "/huge");
    assertThat(huge.body()).hasSize(100 * 1024);
    assertThat(cacheStatus(huge)).doesNotContain("hit");
  }

  @Test
  void waitersOfAResponseThatIsNotShareableFetchForThemselves() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "private, max-age=60");
    o.delayMillis = 500;
    ProxyServer p = proxy(o);
    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      all.add(fx.sendAsyncOnNewConnection(request(p.port(), "/mine")));
    }
    for (CompletableFuture<HttpResponse<String>> f : all) {
      HttpResponse<String> r = f.get();
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("body of /mine");
      assertThat(cacheStatus(r)).doesNotContain("collapsed").doesNotContain("hit");
    }
    assertThat(o.count()).isEqualTo(3);
  }

  @Test
  void afterAnUnshareableResponseMissesForThatKeyAreNotCollapsed() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "no-store");
    ProxyServer p = proxy(o);
    CacheKey key = CacheKey.of("127.0.0.1:" + p.port(), "/busy");
    assertThat(p.cache().isPass(key)).isFalse();

    assertThat(fx.get(p.port(), "/busy").statusCode()).isEqualTo(200);

    // "Hit-for-miss": the next concurrent requests go straight to the origin instead of waiting
    // for each other's fetch only to be told to fetch for themselves.
    assertThat(p.cache().isPass(key)).isTrue();
    o.headers("Cache-Control", "max-age=60");
    assertThat(fx.get(p.port(), "/busy").statusCode()).isEqualTo(200);
    assertThat(p.cache().isPass(key)).isFalse(); // stored again: misses collapse again
    assertThat(cacheStatus(fx.get(p.port(), "/busy"))).contains("hit");
  }

  @Test
  void aClosedBackgroundGateSkipsTheRefreshButStillServesStale() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=10, stale-while-revalidate=60");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/gated");
    p.cache().backgroundGate(() -> false); // what admission does under load
    advanceSeconds(15);
    HttpResponse<String> r = fx.get(p.port(), "/gated");
    assertThat(cacheStatus(r)).contains("detail=stale-while-revalidate");
    assertThat(p.cache().total(EdgeCache.Status.REFRESH_SKIPPED)).isEqualTo(1);
    assertThat(p.cache().total(EdgeCache.Status.REFRESH)).isZero();
    assertThat(o.count()).isEqualTo(1);
  }

  @Test
  void pipelinedRequestsAreAnsweredInOrderFromTheCache() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60");
    ProxyServer p = proxy(o);
    fx.get(p.port(), "/p1");
    fx.get(p.port(), "/p2");
    String host = "Host: 127.0.0.1:" + p.port() + "\r\n";
    String got =
        raw(
            p.port(),
            "GET /p1 HTTP/1.1\r\n"
                + host
                + "\r\nGET /p2 HTTP/1.1\r\n"
                + host
                + "\r\nGET /p1 HTTP/1.1\r\n"
                + host
                + "Connection: close\r\n\r\n");
    assertThat(got.split("HTTP/1.1 200", -1)).hasSize(4);
    assertThat(got.indexOf("body of /p1"))
        .isLessThan(got.indexOf("body of /p2"))
        .isLessThan(got.lastIndexOf("body of /p1"));
    assertThat(o.count()).isEqualTo(2);
  }
}
