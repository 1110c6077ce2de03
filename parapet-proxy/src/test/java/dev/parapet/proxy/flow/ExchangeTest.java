package dev.parapet.proxy.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.admission.AdmissionListener;
import dev.parapet.core.admission.AdmissionTicket;
import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.limit.FixedLimit;
import dev.parapet.core.retry.RetryOn;
import dev.parapet.proxy.config.RetryConfig;
import dev.parapet.proxy.faultorigin.Behaviour;
import dev.parapet.proxy.faultorigin.FaultOrigin;
import dev.parapet.proxy.faultorigin.FaultOriginSettings;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.testing.TestContexts;
import dev.parapet.proxy.upstream.OriginPool;
import dev.parapet.proxy.upstream.OriginSettings;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A request's exchange through its seams: the flow and its exchange run on a real event loop
 * against the fault-injecting origin, and answer into a {@link RecordingDownstream} instead of a
 * client connection. What the downstream is told, and what the breaker, the pool and the origin
 * saw, is the behaviour under test.
 */
class ExchangeTest {
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final EventLoop loop = group.next();
  private FaultOrigin origin;
  private OriginPool pool;
  private ProxyContext px;

  @BeforeEach
  void start() {
    origin =
        FaultOrigin.start(
            FaultOriginSettings.loopback().withSeed(7L),
            FaultPlan.DEFAULT.withPaths(
                Map.of(
                    "/503", Behaviour.builder().errorRate(1.0).errorStatus(503).build(),
                    "/hang", Behaviour.builder().hangRate(1.0).build(),
                    "/mid", Behaviour.builder().bodySize(256 * 1024).midBodyResetRate(1.0).build(),
                    "/reset", Behaviour.builder().resetRate(1.0).build())));
    px = context(1, Duration.ofSeconds(5));
  }

  @AfterEach
  void stop() {
    pool.closeIdle();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    origin.close();
  }

  /**
   * A context whose pool takes {@code maxRequests} at once and gives each attempt {@code timeout}:
   * 5 s unless a test is about the timeout, so a loaded machine's slow answer is not a timeout.
   */
  private ProxyContext context(int maxRequests, Duration timeout) {
    OriginSettings d = OriginSettings.defaults("o", List.of(origin.address()));
    OriginSettings s =
        d.toBuilder()
            .connectTimeout(Duration.ofMillis(500))
            .timeout(timeout)
            .limits(d.maxConnections(), d.maxPending(), maxRequests)
            .breaker(BreakerPolicy.builder().minRequests(100).build(), Scope.ROUTE)
            .retry(
                new RetryConfig(
                    2,
                    new RetryOn(true, false, List.of("503")),
                    RetryConfig.DEFAULTS.budget(),
                    RetryConfig.DEFAULTS.backoff()))
            .build();
    pool = new OriginPool(s, NioSocketChannel.class);
    return TestContexts.builder(
            List.of(new Route("r", null, "/", "o", Duration.ofSeconds(8))),
            Map.of("o", pool),
            s.breaker())
        .build();
  }

  /** Starts a GET for {@code path} on the loop, as a client connection would hand it on. */
  private RequestFlow start(String path, RecordingDownstream down) throws Exception {
    return start(
        new DefaultHttpRequest(
            HttpVersion.HTTP_1_1,
            HttpMethod.GET,
            path,
            new DefaultHttpHeaders().set("Host", "example.test")),
        down);
  }

  /** Starts {@code request} on the loop, as a client connection would hand it on. */
  private RequestFlow start(HttpRequest request, RecordingDownstream down) throws Exception {
    return loop.submit(() -> RequestFlow.start(px, down, Client.UNKNOWN, request)).get();
  }

  /** Runs a GET for {@code path}; what it answers is recorded. */
  private RecordingDownstream get(String path) throws Exception {
    RecordingDownstream down = new RecordingDownstream(loop);
    start(path, down);
    return down;
  }

  private CircuitBreaker breaker() {
    return px.breakers()
        .get(dev.parapet.core.breaker.BreakerKey.of(Scope.ROUTE, "r"), System.nanoTime());
  }

  private String end(RecordingDownstream down) throws Exception {
    return down.done.get(10, TimeUnit.SECONDS);
  }

  @Test
  void theWinnersResponseStreamsThroughAndItsConnectionIsKept() throws Exception {
    RecordingDownstream down = get("/ok");

    assertThat(end(down)).isEqualTo("last");
    assertThat(down.events).first().isEqualTo("head 200");
    assertThat(down.events.stream().filter(e -> e.startsWith("content")))
        .isNotEmpty(); // 1 KiB of body, in one piece or more
    assertThat(breaker().snapshot(System.nanoTime()).calls()).isEqualTo(1);
    assertThat(pool.inFlight()).isZero();
    assertThat(pool.hosts().get(0).openConnections()).isEqualTo(1); // idle, for the next one
  }

  @Test
  void aRetriedStatusNeverReachesTheDownstream() throws Exception {
    RecordingDownstream down = get("/503");

    assertThat(end(down)).as("%s", down.events).isEqualTo("last");
    // Two attempts, one answer: the first 503 was discarded for a retry, the second (attempts
    // exhausted) is forwarded.
    assertThat(origin.stats().requests()).isEqualTo(2);
    assertThat(down.events.stream().filter(e -> e.startsWith("head"))).containsExactly("head 503");
    assertThat(breaker().snapshot(System.nanoTime()).failureRate()).isEqualTo(1.0);
  }

  @Test
  void anAttemptThatTimesOutIsAnsweredHereAndCountsAgainstTheOrigin() throws Exception {
    px = context(1, Duration.ofSeconds(1));
    RecordingDownstream down = get("/hang");

    assertThat(end(down)).isEqualTo("error RESPONSE_TIMEOUT 504");
    assertThat(down.lastBody).contains("no complete response within 1000ms");
    assertThat(breaker().snapshot(System.nanoTime()).calls()).isEqualTo(1);
    assertThat(breaker().snapshot(System.nanoTime()).failureRate()).isEqualTo(1.0);
    await().atMost(Duration.ofSeconds(5)).until(() -> pool.inFlight() == 0);
  }

  @Test
  void anOriginThatBreaksMidBodyResetsTheDownstream() throws Exception {
    RecordingDownstream down = get("/mid");

    assertThat(end(down)).isEqualTo("reset CONNECTION_TERMINATED");
    assertThat(down.events).first().isEqualTo("head 200");
    assertThat(breaker().snapshot(System.nanoTime()).failureRate()).isEqualTo(1.0);
  }

  @Test
  void aConnectionResetBeforeAnyAnswerIsEvidenceAndRetried() throws Exception {
    RecordingDownstream down = get("/reset");

    assertThat(end(down)).isEqualTo("error CONNECTION_TERMINATED 502");
    assertThat(origin.stats().requests()).isEqualTo(2); // connect failures are retried
    assertThat(breaker().snapshot(System.nanoTime()).calls()).isEqualTo(2);
  }

  @Test
  void aFullPoolIsAnsweredHereWithoutEvidence() throws Exception {
    RecordingDownstream holder = get("/hang"); // takes the pool's only request slot
    await().atMost(Duration.ofSeconds(5)).until(() -> origin.stats().requests() == 1);

    RecordingDownstream down = get("/ok");

    assertThat(end(down)).isEqualTo("error CONNECTION_LIMIT 503");
    assertThat(down.lastBody).contains("max_requests reached");
    end(holder);
    assertThat(breaker().snapshot(System.nanoTime()).calls()).isEqualTo(1); // the timeout only
  }

  @Test
  void aBodyHeldForAQueuedRequestIsReleasedWhenItsClientLeaves() throws Exception {
    AdmissionController oneSlot =
        new AdmissionController(FixedLimit.of(1), 10, 1_000_000_000L, 1_000_000_000L);
    AdmissionTicket other =
        new AdmissionTicket(
            new AdmissionListener() {
              @Override
              public void onAdmitted(AdmissionTicket t, long nowNanos) {}

              @Override
              public void onRejected(AdmissionTicket t, RejectReason r, long nowNanos) {}
            });
    oneSlot.offer(other, 2, RequestKind.ORDINARY, System.nanoTime()); // takes the only slot
    px =
        TestContexts.builder(
                List.of(new Route("r", null, "/", "o", Duration.ofSeconds(8))),
                Map.of("o", pool),
                BreakerPolicy.defaults())
            .admission(oneSlot, new ClientLimits(0))
            .build();
    RecordingDownstream down = new RecordingDownstream(loop);
    RequestFlow flow =
        start(
            new DefaultHttpRequest(
                HttpVersion.HTTP_1_1,
                HttpMethod.POST,
                "/ok",
                new DefaultHttpHeaders().set("Host", "example.test").set("Content-Length", "4")),
            down);
    ByteBuf body = Unpooled.copiedBuffer("body", StandardCharsets.US_ASCII);
    // Queued for admission: no origin connection yet, so the body is held.
    loop.submit(() -> flow.onRequestContent(new DefaultLastHttpContent(body))).get();
    assertThat(body.refCnt()).isEqualTo(1);

    loop.submit(flow::onClientGone).get();

    assertThat(body.refCnt()).as("the held body is released").isZero();
    assertThat(oneSlot.queueDepth()).isZero();
    assertThat(down.events).isEmpty();
  }

  @Test
  void aClientThatLeavesStopsTheAttemptWithoutEvidence() throws Exception {
    RecordingDownstream down = new RecordingDownstream(loop);
    RequestFlow flow = start("/hang", down);
    await().atMost(Duration.ofSeconds(5)).until(() -> origin.stats().requests() == 1);

    loop.submit(flow::onClientGone).get();

    assertThat(pool.inFlight()).isZero();
    assertThat(pool.hosts().get(0).openConnections()).isZero(); // its connection was closed
    assertThat(breaker().snapshot(System.nanoTime()).calls()).isZero();
    assertThat(down.events).isEmpty();
  }
}
