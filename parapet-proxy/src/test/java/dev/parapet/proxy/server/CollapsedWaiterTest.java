package dev.parapet.proxy.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.outcome.OutcomeClassifier;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.flow.ProxySettings;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.upstream.OriginSettings;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Requests collapsed behind another request's fetch of the same object keep their own budget: the
 * one their head arrived with, counted from their own start. A waiter whose budget ends first is
 * answered then, not when the fetch it waits for ends; a waiter that must fetch for itself after
 * the shared response turned out unshareable goes with what is left of its budget, never a fresh
 * one. Over real sockets; timing assertions are loose bounds that only the old behaviour broke.
 */
class CollapsedWaiterTest {
  private static final Duration ROUTE_TIMEOUT = Duration.ofSeconds(2);
  private final List<AutoCloseable> closeables = new ArrayList<>();

  /** What the origin saw: the Parapet-Deadline each request carried, in arrival order. */
  private final List<Long> deadlines = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
  }

  /** An origin that holds every request {@code delay}, then answers 200 with {@code cache}. */
  private InetSocketAddress origin(Duration delay, String cacheControl) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext(
        "/",
        ex -> {
          String d = ex.getRequestHeaders().getFirst("Parapet-Deadline");
          deadlines.add(d == null ? -1 : Long.parseLong(d));
          try {
            Thread.sleep(delay.toMillis()); // an origin thread, never the proxy's event loop
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          byte[] body = "body".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
          ex.getResponseHeaders().add("Cache-Control", cacheControl);
          ex.sendResponseHeaders(200, body.length);
          ex.getResponseBody().write(body);
          ex.close();
        });
    server.start();
    closeables.add(() -> server.stop(0));
    return new InetSocketAddress("127.0.0.1", server.getAddress().getPort());
  }

  private ProxyServer proxy(InetSocketAddress origin, Duration originTimeout)
      throws InterruptedException {
    OriginSettings d = OriginSettings.defaults("o", List.of(origin));
    OriginSettings o =
        new OriginSettings(
            "o",
            d.hosts(),
            Duration.ofMillis(500),
            originTimeout,
            d.maxConnections(),
            d.maxPending(),
            d.maxRequests(),
            BreakerPolicy.builder().minRequests(1000).build(),
            Scope.ROUTE,
            OutcomeClassifier.standard(),
            d.latency());
    EdgeCache cache =
        new EdgeCache(
            "edge-test",
            new EdgeCache.Settings(1 << 20, Duration.ofSeconds(300), Duration.ZERO),
            Map.of("r", Duration.ZERO),
            Runnable::run,
            System::currentTimeMillis);
    ProxyServer p =
        ProxyServer.builder(
                ProxySettings.defaults("edge-test", new InetSocketAddress("127.0.0.1", 0)))
            .routes(List.of(new Route("r", null, "/", "o", ROUTE_TIMEOUT)))
            .origins(List.of(o))
            .cache(cache)
            .clock(Ticker.system(), RandomSource.seeded(1))
            .threads(2)
            .build()
            .start();
    closeables.add(p);
    return p;
  }

  /** A request on a connection of its own; completes with the response and its own elapsed ms. */
  private static CompletableFuture<Timed> send(ProxyServer p, String path, String... headers) {
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + p.port() + path))
            .timeout(Duration.ofSeconds(20));
    if (headers.length > 0) {
      b.headers(headers);
    }
    long start = System.nanoTime();
    return client
        .sendAsync(b.build(), HttpResponse.BodyHandlers.ofString())
        .thenApply(r -> new Timed(r, (System.nanoTime() - start) / 1_000_000));
  }

  private record Timed(HttpResponse<String> response, long millis) {}

  @Test
  void waitersReleasedByAnUnshareableAnswerFetchWithWhatIsLeftOfTheirOwnBudget() throws Exception {
    ProxyServer p = proxy(origin(Duration.ofMillis(1_500), "no-store"), Duration.ofSeconds(5));
    CompletableFuture<Timed> leader = send(p, "/obj");
    await().atMost(Duration.ofSeconds(10)).until(() -> deadlines.size() == 1);
    Thread.sleep(200); // the waiters join from 0.2 s to 0.6 s after the leader
    List<CompletableFuture<Timed>> waiters = new ArrayList<>();
    for (int i = 0; i < 19; i++) {
      waiters.add(send(p, "/obj"));
      Thread.sleep(20);
    }

    assertThat(leader.get().response().statusCode()).isEqualTo(200);
    for (CompletableFuture<Timed> w : waiters) {
      Timed t = w.get();
      // Released at 1.5 s by the unshareable answer, each fetches for itself with what its own
      // budget has left (0.65 s to 1.05 s): not enough for the origin's 1.5 s, so it is answered
      // 504 when its own budget ends. With a fresh budget it would have waited for a 200 instead.
      assertThat(t.response().statusCode()).isEqualTo(504);
      assertThat(t.response().headers().firstValue("Proxy-Status").orElse(""))
          .contains("http_response_timeout");
      assertThat(t.millis()).as("elapsed of one waiter").isLessThan(3_000);
    }
    // The leader carried the route's whole budget; each waiter's own fetch only what its own
    // budget had left after waiting, never a fresh one.
    assertThat(deadlines.get(0)).isBetween(1_700L, 1_950L);
    assertThat(deadlines.subList(1, deadlines.size())).hasSize(19).allMatch(ms -> ms < 1_500);
  }

  @Test
  void waitersAreAnsweredWhenTheirOwnBudgetEndsNotWhenTheFetchTheyWaitForDoes() throws Exception {
    ProxyServer p = proxy(origin(Duration.ofSeconds(10), "max-age=60"), Duration.ofSeconds(5));
    CompletableFuture<Timed> leader = send(p, "/slow");
    await().atMost(Duration.ofSeconds(10)).until(() -> deadlines.size() == 1);
    List<CompletableFuture<Timed>> waiters = new ArrayList<>();
    List<Long> budgets = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      long budget = 400 + 30L * i; // all well inside the leader's 2 s
      budgets.add(budget);
      waiters.add(send(p, "/slow", "Parapet-Deadline", Long.toString(budget)));
    }

    for (int i = 0; i < waiters.size(); i++) {
      Timed t = waiters.get(i).get();
      assertThat(t.response().statusCode()).isEqualTo(504);
      assertThat(t.response().headers().firstValue("Proxy-Status").orElse(""))
          .contains("http_response_timeout");
      assertThat(t.millis()).as("waiter with a %d ms budget", budgets.get(i)).isLessThan(1_500);
    }
    assertThat(leader).as("the leader's fetch still runs").isNotDone();
    assertThat(leader.get().response().statusCode()).isEqualTo(504); // its own 2 s, not 10 s
    assertThat(deadlines).hasSize(1); // no waiter went to the origin itself
  }
}
