package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.request;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.overload.OverloadResource;
import dev.parapet.core.retry.RetryOn;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.AdmissionConfig;
import dev.parapet.proxy.config.Cidr;
import dev.parapet.proxy.config.HedgeConfig;
import dev.parapet.proxy.config.RetryConfig;
import dev.parapet.proxy.overload.OverloadMonitor;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.testing.LoopbackOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.RawOrigin;
import dev.parapet.proxy.upstream.OriginSettings;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retries, hedging, admission and failover over real sockets on loopback. Behaviour, not timing:
 * counts of origin calls and answers, never upper bounds on latency.
 */
class ResilienceTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  /**
   * What the scripted origin does with call number n (0-based): status and delay, and the {@code
   * Retry-After} and {@code Cache-Control} it sends (none when empty).
   */
  record Reply(int status, long delayMillis, String retryAfter, String cacheControl) {
    Reply(int status, long delayMillis, String retryAfter) {
      this(status, delayMillis, retryAfter, "");
    }

    static Reply ok() {
      return new Reply(200, 0, "");
    }

    static Reply status(int s) {
      return new Reply(s, 0, "");
    }
  }

  /** An origin whose answer depends on the call number. */
  static final class ScriptedOrigin extends LoopbackOrigin {
    final AtomicInteger calls = new AtomicInteger();
    final IntFunction<Reply> script;

    ScriptedOrigin(IntFunction<Reply> script) throws IOException {
      this.script = script;
      start();
    }

    @Override
    protected void handle(HttpExchange ex) throws IOException {
      int n = calls.getAndIncrement();
      readBody(ex);
      Reply r = script.apply(n);
      pause(r.delayMillis());
      byte[] body = ("call " + n).getBytes(StandardCharsets.UTF_8);
      if (!r.retryAfter().isEmpty()) {
        ex.getResponseHeaders().add("Retry-After", r.retryAfter());
      }
      if (!r.cacheControl().isEmpty()) {
        ex.getResponseHeaders().add("Cache-Control", r.cacheControl());
      }
      try {
        ex.sendResponseHeaders(r.status(), body.length);
        try (OutputStream out = ex.getResponseBody()) {
          out.write(body);
        }
      } catch (IOException gone) {
        // the proxy cancelled this call (a hedge loser): fine
      }
    }
  }

  private ScriptedOrigin origin(IntFunction<Reply> script) throws IOException {
    return fx.closeLater(new ScriptedOrigin(script));
  }

  private static RetryConfig retries(int attempts, double ratio, int minConcurrency, String... on) {
    return new RetryConfig(
        attempts,
        new RetryOn(true, false, List.of(on)),
        new RetryConfig.Budget(ratio, minConcurrency),
        new RetryConfig.Backoff(Duration.ofMillis(1), Duration.ofMillis(5)));
  }

  private static OriginSettings pool(
      String name, List<InetSocketAddress> hosts, RetryConfig retry, HedgeConfig hedge) {
    return OriginSettings.defaults(name, hosts).withTraffic(retry, hedge, null);
  }

  /** A proxy with {@link ProxyFixture}'s defaults but the jitter of seed 7. */
  private ProxyFixture.ProxySpec proxy() {
    return fx.proxy().seed(7);
  }

  /** A proxy whose route {@code /} goes to the pool {@code api} on {@code o}. */
  private ProxyFixture.ProxySpec proxyTo(InetSocketAddress o, RetryConfig retry) {
    return proxy()
        .routes(route("/", "api"))
        .origins(pool("api", List.of(o), retry, HedgeConfig.OFF));
  }

  private ProxyFixture.ProxySpec proxyTo(ScriptedOrigin o, RetryConfig retry, HedgeConfig hedge) {
    return proxy()
        .routes(route("/", "api"))
        .origins(pool("api", List.of(o.address()), retry, hedge));
  }

  /** One route, its id its prefix. */
  private static Route route(String prefix, String origin) {
    return ProxyFixture.route(prefix, prefix, origin);
  }

  /** A POST with a body (one byte). */
  private HttpResponse<String> post(ProxyServer p, String path)
      throws IOException, InterruptedException {
    return fx.send(request(p.port(), path).POST(HttpRequest.BodyPublishers.ofString("x")));
  }

  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static double counter(ProxyServer p, String family, String result) {
    for (String line : p.metrics().scrape().split("\n")) {
      if (line.startsWith(family + "{") && line.contains("result=\"" + result + "\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  // --- retries --------------------------------------------------------------------------------

  @Test
  void a503IsRetriedAndTheClientSeesTheSecondAnswer() throws Exception {
    ScriptedOrigin o = origin(n -> n == 0 ? Reply.status(503) : Reply.ok());
    ProxyServer p = proxyTo(o, retries(2, 0.2, 5, "503"), HedgeConfig.OFF).start();

    HttpResponse<String> r = fx.get(p.port(), "/x");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("call 1");
    assertThat(o.calls).hasValue(2);
    assertThat(counter(p, "parapet_retries_total", "sent")).isEqualTo(1.0);
  }

  @Test
  void aConnectFailureIsRetriedOnAnotherHost() throws Exception {
    ScriptedOrigin healthy = origin(n -> Reply.ok());
    InetSocketAddress dead = new InetSocketAddress("127.0.0.1", closedPort());
    ProxyServer p =
        proxy()
            .routes(route("/", "api"))
            .origins(
                pool(
                    "api",
                    List.of(dead, healthy.address()),
                    retries(2, 0.2, 5, "503"),
                    HedgeConfig.OFF))
            .start();

    // Round robin: each first attempt goes to the dead host, its retry to the other one. (A third
    // connect failure within 10 s would fast-trip the route's breaker: that is the breaker's job.)
    for (int i = 0; i < 2; i++) {
      assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200);
    }
    assertThat(healthy.calls).hasValue(2);
    assertThat(counter(p, "parapet_retries_total", "sent")).isEqualTo(2.0);
  }

  /**
   * An origin that reads each request and closes the connection without answering is failing those
   * requests, not unreachable: 502 with {@code connection_terminated}, counted as {@code reset},
   * and five of them within 10 s do not fast-trip the breaker the way three refused connections do.
   */
  @Test
  void aConnectionClosedAfterTheRequestIsAResetNotAConnectFailure() throws Exception {
    RawOrigin o = fx.closeLater(RawOrigin.start(n -> RawOrigin.Reply.thenClose("")));
    ProxyServer p = proxyTo(o.address(), retries(1, 1.0, 50, "503")).start();

    for (int i = 0; i < 5; i++) {
      HttpResponse<String> r = fx.get(p.port(), "/x");
      assertThat(r.statusCode()).isEqualTo(502);
      assertThat(r.headers().firstValue("Proxy-Status"))
          .hasValueSatisfying(v -> assertThat(v).contains("error=connection_terminated"));
    }
    assertThat(o.requests()).as("every request reached the origin: no breaker opened").hasSize(5);
    assertThat(counter(p, "parapet_origin_attempts_total", "reset")).isEqualTo(5.0);
    assertThat(counter(p, "parapet_origin_attempts_total", "connect_failure")).isZero();
  }

  /**
   * A pooled connection the origin closes just as a request goes out looks the same; a request that
   * may be repeated is sent again ({@code retry.on: connect_failure}).
   */
  @Test
  void aGetWhoseConnectionClosedBeforeAnyResponseIsRetried() throws Exception {
    RawOrigin o =
        fx.closeLater(
            RawOrigin.start(n ->
                n == 0
                    ? RawOrigin.Reply.thenClose("")
                    : RawOrigin.Reply.keepOpen("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")));
    ProxyServer p = proxyTo(o.address(), retries(2, 1.0, 50, "503")).start();

    HttpResponse<String> r = fx.get(p.port(), "/x");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("ok");
    assertThat(o.requests()).hasSize(2);
  }

  @Test
  void nonIdempotentRequestsAreNotRetried() throws Exception {
    ScriptedOrigin o = origin(n -> Reply.status(503));
    ProxyServer p = proxyTo(o, retries(3, 1.0, 50, "503"), HedgeConfig.OFF).start();

    assertThat(post(p, "/x").statusCode()).isEqualTo(503);
    assertThat(o.calls).hasValue(1);
  }

  @Test
  void aRouteMayOptInToRetryingBodylessNonIdempotentRequests() throws Exception {
    ScriptedOrigin o = origin(n -> n == 0 ? Reply.status(503) : Reply.ok());
    Route optIn = new Route("/", null, "/", "api", Duration.ofSeconds(8), null, 2, true);
    ProxyServer p =
        proxy()
            .routes(optIn)
            .origins(pool("api", List.of(o.address()), retries(2, 1.0, 50, "503"), HedgeConfig.OFF))
            .start();

    HttpResponse<String> r = fx.send(p.port(), "POST", "/x"); // no body

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(o.calls).hasValue(2);
  }

  @Test
  void attemptsStopAtTheConfiguredNumber() throws Exception {
    ScriptedOrigin o = origin(n -> Reply.status(503));
    ProxyServer p = proxyTo(o, retries(3, 1.0, 50, "503"), HedgeConfig.OFF).start();

    HttpResponse<String> r = fx.get(p.port(), "/x");

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).isEqualTo("call 2"); // the last attempt's answer is forwarded
    assertThat(o.calls).hasValue(3);
  }

  @Test
  void anOriginRetryAfterIsHonoured() throws Exception {
    ScriptedOrigin o = origin(n -> n == 0 ? new Reply(503, 0, "1") : Reply.ok());
    ProxyServer p = proxyTo(o, retries(2, 0.2, 5, "503"), HedgeConfig.OFF).start();

    long start = System.nanoTime();
    HttpResponse<String> r = fx.get(p.port(), "/x");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(900_000_000L);
  }

  @Test
  void aRetryThatCannotFitTheDeadlineIsNotMade() throws Exception {
    ScriptedOrigin o = origin(n -> n == 0 ? new Reply(503, 0, "30") : Reply.ok());
    ProxyServer p = proxyTo(o, retries(2, 0.2, 5, "503"), HedgeConfig.OFF).start();

    HttpResponse<String> r = fx.get(p.port(), "/x"); // Retry-After 30 s > the 8 s route timeout

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(o.calls).hasValue(1);
    assertThat(counter(p, "parapet_retries_total", "deadline")).isEqualTo(1.0);
  }

  /**
   * Seed 000's storm: every call fails. Naive retrying with 3 attempts would triple the origin's
   * load; the budget (active retries <= 20 % of active requests) keeps it near 1.25x.
   */
  @Test
  void aRetryStormIsBoundedByTheBudget() throws Exception {
    ScriptedOrigin o = origin(n -> new Reply(503, 20, ""));
    OriginSettings d = OriginSettings.defaults("api", List.of(o.address()));
    // The breaker in shadow mode: this test is about the retry budget alone. A long attempt
    // timeout: a loaded machine's slow origin must not turn its 503s into 504s.
    OriginSettings api =
        d.toBuilder()
            .timeout(Duration.ofSeconds(7))
            .breaker(BreakerPolicy.builder().mode(Mode.SHADOW).build(), Scope.ROUTE)
            .retry(retries(3, 0.2, 1, "503"))
            .build();
    ProxyServer p = proxy().routes(route("/", "api")).origins(api).start();
    int offered = 400;
    Semaphore concurrency = new Semaphore(40);
    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < offered; i++) {
      concurrency.acquire();
      all.add(fx.sendAsync(p.port(), "/x").whenComplete((r, e) -> concurrency.release()));
    }
    for (CompletableFuture<HttpResponse<String>> f : all) {
      assertThat(f.get().statusCode()).as(f.get().body()).isEqualTo(503);
    }

    assertThat(o.calls.get())
        .isGreaterThanOrEqualTo(offered)
        .isLessThanOrEqualTo(offered * 14 / 10);
    assertThat(counter(p, "parapet_retries_total", "budget")).isPositive();
  }

  // --- hedging --------------------------------------------------------------------------------

  /**
   * A bimodal origin: every fifth call takes 3 s, the others answer at once. A hedge after 100 ms
   * goes to the next call, which is fast: it wins, and the slow one is cancelled.
   */
  @Test
  void aSlowAttemptIsHedgedAndTheHedgeWins() throws Exception {
    ScriptedOrigin o = origin(n -> n % 5 == 4 ? new Reply(200, 3000, "") : Reply.ok());
    HedgeConfig hedge =
        new HedgeConfig(
            true, new HedgeConfig.Delay.Fixed(Duration.ofMillis(100)), Duration.ofMillis(20), 0.5);
    ProxyServer p = proxyTo(o, retries(1, 0.2, 5), hedge).start();

    int requests = 20;
    for (int i = 0; i < requests; i++) {
      assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200);
    }

    double sent = counter(p, "parapet_hedges_total", "sent");
    assertThat(sent).isGreaterThanOrEqualTo(3.0);
    assertThat(counter(p, "parapet_hedges_total", "won")).isGreaterThanOrEqualTo(3.0);
    // Extra load: one call per hedge, never more than the 50 % rate cap (plus its burst of 10).
    assertThat(o.calls.get()).isEqualTo(requests + (int) sent);
    assertThat(sent).isLessThanOrEqualTo(requests * 0.5 + 10);
  }

  @Test
  void noHedgeForRequestsWithABody() throws Exception {
    ScriptedOrigin o = origin(n -> new Reply(200, 300, ""));
    HedgeConfig hedge =
        new HedgeConfig(
            true, new HedgeConfig.Delay.Fixed(Duration.ofMillis(20)), Duration.ofMillis(20), 1.0);
    ProxyServer p = proxyTo(o, retries(1, 0.2, 5), hedge).start();

    assertThat(post(p, "/x").statusCode()).isEqualTo(200);
    assertThat(o.calls).hasValue(1);
  }

  // --- admission ------------------------------------------------------------------------------

  private static AdmissionConfig admission(int limit, int queue) {
    return new AdmissionConfig(
        new AdmissionConfig.Limit(AdmissionConfig.Algorithm.FIXED, limit, 1, limit),
        new AdmissionConfig.Queue(queue, Duration.ofSeconds(5), Duration.ofSeconds(10)),
        AdmissionConfig.Priority.DEFAULTS,
        AdmissionConfig.RetryAfter.DEFAULTS);
  }

  /**
   * Two slow requests hold both slots, two priority-4 requests wait in the queue; two priority-1
   * requests arrive: the background ones are shed (503 + Retry-After + the load hint), the critical
   * ones are served.
   */
  @Test
  void underOverloadLowPriorityIsShedBeforeHighPriority() throws Exception {
    ScriptedOrigin o = origin(n -> new Reply(200, n < 2 ? 1500 : 0, ""));
    ProxyServer p =
        proxy()
            .settings(s -> s.withAdmission(admission(2, 2)))
            .routes(
                new Route("/low/", null, "/low/", "api", Duration.ofSeconds(20), null, 4),
                new Route("/high/", null, "/high/", "api", Duration.ofSeconds(20), null, 1),
                // The whole limit is this route's share: no route's guarantee bypasses the queue,
                // so priorities alone decide who waits and who is shed.
                new Route(
                    "/",
                    null,
                    "/",
                    "api",
                    Duration.ofSeconds(20),
                    null,
                    2,
                    false,
                    null,
                    null,
                    null,
                    1.0))
            .origins(pool("api", List.of(o.address()), retries(1, 0.2, 5), HedgeConfig.OFF))
            .start();

    var busy1 = fx.sendAsync(p.port(), "/busy");
    var busy2 = fx.sendAsync(p.port(), "/busy");
    await().atMost(Duration.ofSeconds(10)).until(() -> p.admission().inflight() == 2);
    var low1 = fx.sendAsync(p.port(), "/low/a");
    var low2 = fx.sendAsync(p.port(), "/low/b");
    await().atMost(Duration.ofSeconds(10)).until(() -> p.admission().queueDepth() == 2);
    var high1 = fx.sendAsync(p.port(), "/high/a");
    var high2 = fx.sendAsync(p.port(), "/high/b");

    for (var low : List.of(low1, low2)) {
      HttpResponse<String> r = low.get();
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.headers().firstValue("Retry-After")).isPresent();
      assertThat(r.headers().firstValue("Proxy-Status").orElseThrow())
          .contains("error=proxy_internal_response");
      assertThat(
              r.headers()
                  .firstValue(dev.parapet.proxy.flow.RequestFlow.CAPACITY_HEADER)
                  .orElseThrow())
          .contains("limit=2");
    }
    for (var ok : List.of(high1, high2, busy1, busy2)) {
      assertThat(ok.get().statusCode()).isEqualTo(200);
    }
    assertThat(o.calls).hasValue(4); // shed requests never reached the origin
    assertThat(p.metrics().scrape())
        .contains("parapet_shed_total{priority=\"4\",reason=\"displaced\"} 2.0");
  }

  /**
   * Route bulkheads: a slow route fills the listener's limit while its sibling is quiet; the
   * sibling's requests are still served at once (its guaranteed half), and the slow route's next
   * request is the one refused.
   */
  @Test
  void aSlowRouteCannotStarveItsSiblingOfItsShare() throws Exception {
    ScriptedOrigin slow = origin(n -> new Reply(200, 2000, ""));
    ScriptedOrigin fast = origin(n -> Reply.ok());
    ProxyServer p =
        proxy()
            .settings(s -> s.withAdmission(admission(4, 0)))
            .routes(
                new Route("/slow/", null, "/slow/", "slow", Duration.ofSeconds(20)),
                new Route("/fast/", null, "/fast/", "fast", Duration.ofSeconds(20)))
            .origins(
                pool("slow", List.of(slow.address()), retries(1, 0.2, 5), HedgeConfig.OFF),
                pool("fast", List.of(fast.address()), retries(1, 0.2, 5), HedgeConfig.OFF))
            .start();

    List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      held.add(fx.sendAsync(p.port(), "/slow/" + i));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> p.admission().inflight() == 4);
    assertThat(fx.get(p.port(), "/slow/more").statusCode()).isEqualTo(503);
    for (int i = 0; i < 5; i++) {
      assertThat(fx.get(p.port(), "/fast/" + i).statusCode()).isEqualTo(200);
    }
    for (var h : held) {
      assertThat(h.get().statusCode()).isEqualTo(200);
    }
  }

  @Test
  void aTrustedPriorityHeaderLowersTheClass() throws Exception {
    ScriptedOrigin o = origin(n -> Reply.ok());
    ProxyServer p =
        proxyTo(o, retries(1, 0.2, 5), HedgeConfig.OFF)
            .settings(s ->
                s.withAdmission(admission(10, 10))
                    .withTrustedProxies(List.of(Cidr.parse("127.0.0.1/32"))))
            .start();
    p.admission().overloadLevel(OverloadLevel.SHED_LOW_PRIORITY, System.nanoTime());

    // 127.0.0.1 is a trusted proxy here: u=7 is background work, shed at this level.
    assertThat(fx.get(p.port(), "/x", "Priority", "u=7").statusCode()).isEqualTo(503);
    assertThat(fx.get(p.port(), "/x", "Priority", "u=1, i").statusCode()).isEqualTo(200);
    assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200);
  }

  @Test
  void anUntrustedPeersPriorityHeaderIsIgnored() throws Exception {
    ScriptedOrigin o = origin(n -> Reply.ok());
    ProxyServer p =
        proxyTo(o, retries(1, 0.2, 5), HedgeConfig.OFF)
            .settings(s -> s.withAdmission(admission(10, 10)))
            .start();
    p.admission().overloadLevel(OverloadLevel.SHED_LOW_PRIORITY, System.nanoTime());

    // Nobody is trusted by default: the route's class holds, whatever the client claims.
    assertThat(fx.get(p.port(), "/x", "Priority", "u=7").statusCode()).isEqualTo(200);
  }

  @Test
  void whenStoppingAcceptingEveryRequestIsShedAndTheConnectionClosed() throws Exception {
    ScriptedOrigin o = origin(n -> Reply.ok());
    ProxyServer p =
        proxyTo(o, retries(1, 0.2, 5), HedgeConfig.OFF)
            .settings(s -> s.withAdmission(admission(10, 10)))
            .start();
    p.admission().overloadLevel(OverloadLevel.STOP_ACCEPTING, System.nanoTime());

    HttpResponse<String> r = fx.get(p.port(), "/x");

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Connection")).hasValue("close");
    assertThat(o.calls).hasValue(0);
  }

  @Test
  void aClientOverItsOwnLimitGets429WhileOthersAreServed() throws Exception {
    ScriptedOrigin o = origin(n -> new Reply(200, n == 0 ? 1500 : 0, ""));
    AdmissionConfig a = AdmissionConfig.DEFAULTS;
    AdmissionConfig perClient =
        new AdmissionConfig(
            a.limit(), a.queue(), a.priority(), a.retryAfter(), new AdmissionConfig.PerClient(1));
    ProxyServer p =
        proxyTo(o, retries(1, 0.2, 5), HedgeConfig.OFF)
            .settings(s -> s.withAdmission(perClient))
            .start();

    var slow = fx.sendAsync(p.port(), "/slow");
    await().atMost(Duration.ofSeconds(10)).until(() -> o.calls.get() == 1);
    HttpResponse<String> second = fx.get(p.port(), "/x");

    assertThat(second.statusCode()).isEqualTo(429);
    assertThat(second.headers().firstValue("Retry-After")).isPresent();
    assertThat(slow.get().statusCode()).isEqualTo(200);
    assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200); // its slot came back
  }

  /**
   * Overload: the "heap" fills with requests held in flight by a slow origin (40 in flight stand
   * for a full heap). The overload monitor raises the level as it fills, admission stops accepting,
   * and the flood is answered 503 instead of piling up until the proxy dies.
   *
   * <p>The flood arrives two requests per sample of the monitor, so the monitor sees it grow
   * whether this machine is fast or busy. At the nominal 10 ms sample period the 150 requests
   * arrive in about 0.75 s, inside the origin's 1.5 s: without the monitor nearly all of them would
   * be in flight at once.
   */
  @Test
  void aFloodOfSlowRequestsIsShedInsteadOfPilingUp() throws Exception {
    ScriptedOrigin o = origin(n -> new Reply(200, 1500, ""));
    AtomicReference<ProxyServer> server = new AtomicReference<>();
    AtomicInteger maxInflight = new AtomicInteger();
    AtomicInteger samples = new AtomicInteger();
    DoubleSupplier heap =
        () -> {
          samples.incrementAndGet();
          ProxyServer p = server.get();
          if (p == null) {
            return 0.0;
          }
          int inflight = p.admission().inflight();
          maxInflight.accumulateAndGet(inflight, Math::max);
          return Math.min(1.0, inflight / 40.0);
        };
    OverloadMonitor monitor =
        new OverloadMonitor(
            dev.parapet.core.overload.OverloadConfig.none()
                .with(OverloadResource.HEAP, OverloadLevel.SHED_LOW_PRIORITY, 0.5)
                .with(OverloadResource.HEAP, OverloadLevel.STOP_ACCEPTING, 0.9)
                .withHysteresis(0.05, Duration.ZERO),
            heap,
            () -> Double.NaN,
            Ticker.system(),
            Duration.ofMillis(10),
            Duration.ofMillis(10));
    ProxyServer p =
        proxyTo(o, retries(1, 0.2, 5), HedgeConfig.OFF).seed(3).overload(monitor).start();
    server.set(p);

    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < 150; i++) {
      all.add(fx.sendAsync(p.port(), "/flood/" + i));
      if (i % 2 == 1) {
        int seen = samples.get();
        await()
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(1))
            .atMost(Duration.ofSeconds(10))
            .until(() -> samples.get() > seen);
      }
    }
    int ok = 0;
    int shed = 0;
    for (CompletableFuture<HttpResponse<String>> f : all) {
      HttpResponse<String> r = f.get(); // every request is answered: nothing hangs, nothing dies
      if (r.statusCode() == 200) {
        ok++;
      } else if (r.statusCode() == 503
          && r.headers()
              .firstValue("Proxy-Status")
              .orElse("")
              .contains("proxy_internal_response")) {
        shed++;
      }
    }
    assertThat(ok + shed).isEqualTo(150);
    assertThat(ok).isPositive();
    assertThat(shed).isPositive();
    // Without the monitor all 150 would be in flight at once; the level stops the pile-up.
    assertThat(maxInflight.get()).isLessThan(100);
  }

  // --- failover -------------------------------------------------------------------------------

  @Test
  void anOpenBreakerFailsOverToTheFallbackPool() throws Exception {
    ScriptedOrigin primary = origin(n -> Reply.ok());
    ScriptedOrigin secondary = origin(n -> Reply.ok());
    OriginSettings api =
        OriginSettings.defaults("api", List.of(primary.address()))
            .withTraffic(retries(1, 0.2, 5), HedgeConfig.OFF, "api_secondary");
    OriginSettings backup =
        OriginSettings.defaults("api_secondary", List.of(secondary.address()))
            .withTraffic(retries(1, 0.2, 5), HedgeConfig.OFF, null);
    ProxyServer p = proxy().routes(route("/", "api")).origins(api, backup).start();
    p.breakers()
        .get(BreakerKey.of(Scope.ROUTE, "/"), System.nanoTime())
        .forceOpen(System.nanoTime());

    HttpResponse<String> r = fx.get(p.port(), "/x");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(primary.calls).hasValue(0);
    assertThat(secondary.calls).hasValue(1);
    assertThat(r.headers().firstValue("Proxy-Status").orElseThrow())
        .contains("next-hop=\"api_secondary\"")
        .contains("fallback");
  }
}
