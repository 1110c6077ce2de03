package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.latency.AdaptiveWait;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.RawOrigin;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code stale_on_slow: auto}, the default, through the proxy on loopback: the route states no
 * duration, the wait comes from the origin's own observed latency. The origin's second answer is
 * held on a latch the test releases only after the client has its answer, so "answered before the
 * origin" is a fact of the test, not a timing.
 */
class AutoStaleOnSlowProxyTest {
  private static final String OLD =
      "HTTP/1.1 200 OK\r\nCache-Control: max-age=1\r\nContent-Length: 3\r\n\r\nold";
  private static final String NEW =
      "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Length: 3\r\n\r\nnew";

  private final AtomicLong skew = new AtomicLong();
  private final Ticker ticker = () -> System.nanoTime() + skew.get();

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private ProxyServer proxy(RawOrigin o, Duration staleOnSlow) throws InterruptedException {
    EdgeCache cache =
        new EdgeCache(
            ProxyFixture.NAME,
            CacheDefaultsProxyTest.defaults(), // stale-if-error 300 s on timeouts and the like
            Runnable::run,
            System::currentTimeMillis,
            Map.of("r", new EdgeCache.RouteRules(Duration.ZERO, staleOnSlow)));
    return fx.proxy()
        .routes(route("r", "/", "o"))
        .origins(
            pool("o", o.address())
                .timeout(Duration.ofSeconds(30))
                .breaker(BreakerPolicy.builder().minRequests(1000).build())
                .build())
        .cache(cache)
        .ticker(ticker)
        .start();
  }

  private static String cacheStatus(HttpResponse<?> r) {
    return r.headers().firstValue("Cache-Status").orElse("");
  }

  @Test
  void aSlowOriginIsAnsweredStaleLongBeforeItsTimeoutAndTheFetchRefreshesTheEntry()
      throws Exception {
    CountDownLatch originMayAnswer = new CountDownLatch(1);
    RawOrigin o =
        fx.closeLater(
            RawOrigin.start(n -> {
              if (n == 0) {
                return RawOrigin.Reply.keepOpen(OLD);
              }
              try {
                originMayAnswer.await(); // a slow origin: it answers when the test says so
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return RawOrigin.Reply.keepOpen(NEW);
            }));
    ProxyServer p = proxy(o, null);
    assertThat(fx.get(p.port(), "/x").body()).isEqualTo("old"); // stored; one latency sample
    skew.addAndGet(Duration.ofSeconds(5).toNanos()); // stale now, within stale-if-error

    HttpResponse<String> first = fx.get(p.port(), "/x");
    assertThat(originMayAnswer.getCount()).as("the origin has not answered yet").isEqualTo(1);
    assertThat(first.body()).isEqualTo("old");
    assertThat(cacheStatus(first)).contains("fwd=stale").contains("detail=\"stale slow-origin\"");
    assertThat(o.requests()).hasSize(2); // the fetch did go to the origin
    AdaptiveWait observed = p.origins().get("o").staleWait("r").latency();
    assertThat(observed.isOverdue(ticker.read()))
        .as("one answer past its wait alone: a healthy origin's tail")
        .isFalse();

    // a request meanwhile joins the fetch and is answered stale after its own wait (the second
    // request past the estimate: the origin is overdue from then on)
    HttpResponse<String> meanwhile = fx.get(p.port(), "/x");
    assertThat(meanwhile.body()).isEqualTo("old");
    assertThat(cacheStatus(meanwhile)).contains("detail=\"stale slow-origin\"");
    assertThat(observed.isOverdue(ticker.read())).as("two past the p95: overdue").isTrue();
    long joined = p.cache().collapser().collapsedTotal();
    // once it is overdue, a request is answered stale at once, without joining the fetch
    HttpResponse<String> then = fx.get(p.port(), "/x");
    assertThat(then.body()).isEqualTo("old");
    assertThat(cacheStatus(then)).contains("detail=\"stale slow-origin\"");
    assertThat(p.cache().collapser().collapsedTotal()).isEqualTo(joined);

    originMayAnswer.countDown();
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> {
          HttpResponse<String> r = fx.get(p.port(), "/x");
          assertThat(cacheStatus(r)).startsWith(ProxyFixture.NAME + "; hit");
          assertThat(r.body()).isEqualTo("new");
        });
    assertThat(o.requests()).hasSize(2); // the stored copy, then the one slow fetch
    assertThat(p.cache().total(EdgeCache.Status.STALE_ON_SLOW)).isGreaterThanOrEqualTo(2);
  }

  @Test
  void zeroTurnsItOffAndTheRequestWaitsForTheOrigin() throws Exception {
    CountDownLatch originMayAnswer = new CountDownLatch(1);
    CountDownLatch originAsked = new CountDownLatch(2);
    RawOrigin o =
        fx.closeLater(
            RawOrigin.start(n -> {
              originAsked.countDown();
              if (n > 0) {
                try {
                  originMayAnswer.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }
              return RawOrigin.Reply.keepOpen(n == 0 ? OLD : NEW);
            }));
    ProxyServer p = proxy(o, Duration.ZERO);
    fx.get(p.port(), "/x");
    skew.addAndGet(Duration.ofSeconds(5).toNanos());
    CompletableFuture<HttpResponse<String>> answer =
        CompletableFuture.supplyAsync(() -> {
          try {
            return fx.get(p.port(), "/x");
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
    originAsked.await();
    // the origin has the request; with stale_on_slow off the client gets nothing until it answers
    await()
        .during(Duration.ofMillis(300)) // time for a wrong stale answer (auto: 20 ms) to show up
        .atMost(Duration.ofSeconds(2))
        .until(() -> !answer.isDone());
    originMayAnswer.countDown();
    assertThat(answer.get().body()).isEqualTo("new");
  }

  /**
   * A run of waiting requests past the origin's p95 makes it overdue there: five requests, each
   * holding its own stale copy, are all answered when they have waited the p95 (2 s here), not
   * twice it. The origin's healthy answers are made to take 2 s on the proxy's clock (the test's
   * ticker moves while the origin answers), so no real time passes before the slow phase; the 1.5 s
   * between the two answers' times is the test's margin for a loaded machine.
   */
  @Test
  void aRunOfRequestsPastTheOriginsP95IsAnsweredThereNotAtTwiceIt() throws Exception {
    CountDownLatch originMayAnswer = new CountDownLatch(1);
    RawOrigin o =
        fx.closeLater(
            RawOrigin.start(n -> {
              if (n < 5) {
                skew.addAndGet(Duration.ofSeconds(2).toNanos()); // a 2 s answer on our clock
                return RawOrigin.Reply.keepOpen(OLD);
              }
              try {
                originMayAnswer.await(); // now slow for real
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return RawOrigin.Reply.keepOpen(NEW);
            }));
    try {
      ProxyServer p = proxy(o, null);
      String[] paths = {"/a", "/b", "/c", "/d", "/e"};
      for (String path : paths) {
        assertThat(fx.get(p.port(), path).body()).isEqualTo("old"); // one 2 s sample each
      }
      skew.addAndGet(Duration.ofSeconds(5).toNanos()); // every copy stale, within stale-if-error

      long start = System.nanoTime();
      List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
      for (String path : paths) {
        answers.add(
            CompletableFuture.supplyAsync(() -> {
              try {
                return fx.get(p.port(), path);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            }));
      }
      for (CompletableFuture<HttpResponse<String>> a : answers) {
        HttpResponse<String> r = a.get(20, TimeUnit.SECONDS);
        assertThat(r.body()).isEqualTo("old");
        assertThat(cacheStatus(r)).contains("detail=\"stale slow-origin\"");
      }
      long tookMillis = (System.nanoTime() - start) / 1_000_000;
      assertThat(tookMillis)
          .as("answered at the p95 (2 s), not at the wait (4 s)")
          .isLessThan(3_500);
    } finally {
      originMayAnswer.countDown();
    }
  }
}
