package dev.parapet.proxy.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.testing.CacheOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Requests collapsed behind another request's fetch of the same object keep their own budget: the
 * one their head arrived with, counted from their own start. A waiter whose budget ends first is
 * answered then, not when the fetch it waits for ends; a waiter that must fetch for itself after
 * the shared response turned out unshareable goes with what is left of its budget, never a fresh
 * one. Over real sockets; timing assertions are loose bounds that only the old behaviour broke.
 */
class CollapsedWaiterTest {
  /**
   * The route's budget: a second more than the unshareable origin's answer takes, so the leader is
   * answered on a loaded machine, and less than twice it, so that a released waiter's own fetch
   * never has enough left.
   */
  private static final Duration ROUTE_TIMEOUT = Duration.ofSeconds(4);

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  /** An origin that holds every request {@code delay}, then answers 200 with {@code cache}. */
  private CacheOrigin origin(Duration delay, String cacheControl) throws IOException {
    CacheOrigin o = fx.cacheOrigin();
    o.delayMillis = delay.toMillis();
    o.headers("Cache-Control", cacheControl);
    return o;
  }

  /** The Parapet-Deadline each request to {@code o} carried, in arrival order. */
  private static List<Long> deadlines(CacheOrigin o) {
    return o.seen.stream().map(r -> Long.parseLong(r.header("Parapet-Deadline"))).toList();
  }

  private ProxyServer proxy(CacheOrigin origin) throws InterruptedException {
    return fx.proxy()
        .trustingLoopback() // the waiters' own Parapet-Deadline is believed
        .routes(new Route("r", null, "/", "o", ROUTE_TIMEOUT))
        .origins(
            ProxyFixture.pool("o", origin.address())
                .timeout(Duration.ofSeconds(5))
                .breaker(BreakerPolicy.builder().minRequests(1000).build())
                .build())
        .cache(ProxyFixture.edgeCache("r"))
        .start();
  }

  /** A request on a connection of its own; completes with the response and its own elapsed ms. */
  private CompletableFuture<Timed> send(ProxyServer p, String path, String... headers) {
    long start = System.nanoTime();
    return fx.sendAsyncOnNewConnection(ProxyFixture.request(p.port(), path, headers))
        .thenApply(r -> new Timed(r, (System.nanoTime() - start) / 1_000_000));
  }

  private record Timed(HttpResponse<String> response, long millis) {}

  @Test
  void waitersReleasedByAnUnshareableAnswerFetchWithWhatIsLeftOfTheirOwnBudget() throws Exception {
    CacheOrigin o = origin(Duration.ofMillis(3_000), "no-store");
    ProxyServer p = proxy(o);
    CompletableFuture<Timed> leader = send(p, "/obj");
    await().atMost(Duration.ofSeconds(10)).until(() -> o.count() == 1);
    Thread.sleep(200); // the waiters join from 0.2 s to 0.6 s after the leader
    List<CompletableFuture<Timed>> waiters = new ArrayList<>();
    for (int i = 0; i < 19; i++) {
      waiters.add(send(p, "/obj"));
      Thread.sleep(20);
    }

    assertThat(leader.get().response().statusCode()).isEqualTo(200);
    for (CompletableFuture<Timed> w : waiters) {
      Timed t = w.get();
      // Released at 3 s by the unshareable answer, each fetches for itself with what its own
      // budget has left (1.2 s to 1.6 s): not enough for the origin's 3 s, so it is answered 504
      // when its own budget ends. With a fresh budget it would have waited for a 200 instead.
      assertThat(t.response().statusCode()).isEqualTo(504);
      assertThat(t.response().headers().firstValue("Proxy-Status").orElse(""))
          .contains("http_response_timeout");
      assertThat(t.millis()).as("elapsed of one waiter").isLessThan(6_000);
    }
    // The leader carried the route's whole budget; each waiter's own fetch only what its own
    // budget had left after waiting, never a fresh one.
    List<Long> deadlines = deadlines(o);
    assertThat(deadlines.get(0)).isBetween(3_000L, 3_950L);
    assertThat(deadlines.subList(1, deadlines.size())).hasSize(19).allMatch(ms -> ms < 2_500);
  }

  @Test
  void waitersAreAnsweredWhenTheirOwnBudgetEndsNotWhenTheFetchTheyWaitForDoes() throws Exception {
    CacheOrigin o = origin(Duration.ofSeconds(10), "max-age=60");
    ProxyServer p = proxy(o);
    CompletableFuture<Timed> leader = send(p, "/slow");
    await().atMost(Duration.ofSeconds(10)).until(() -> o.count() == 1);
    List<CompletableFuture<Timed>> waiters = new ArrayList<>();
    List<Long> budgets = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      long budget = 400 + 30L * i; // all well inside the leader's 4 s
      budgets.add(budget);
      waiters.add(send(p, "/slow", "Parapet-Deadline", Long.toString(budget)));
    }

    for (int i = 0; i < waiters.size(); i++) {
      Timed t = waiters.get(i).get();
      assertThat(t.response().statusCode()).isEqualTo(504);
      assertThat(t.response().headers().firstValue("Proxy-Status").orElse(""))
          .contains("http_response_timeout");
      assertThat(t.millis()).as("waiter with a %d ms budget", budgets.get(i)).isLessThan(2_500);
    }
    assertThat(leader).as("the leader's fetch still runs").isNotDone();
    assertThat(leader.get().response().statusCode()).isEqualTo(504); // its own 4 s, not 10 s
    assertThat(o.count()).isEqualTo(1); // no waiter went to the origin itself
  }
}
