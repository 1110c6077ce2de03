package dev.parapet.proxy.faultorigin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FaultOriginTest {
  private @Nullable FaultOrigin origin;
  private HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void setUp() {
    NettyLeaks.watch();
    client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
  }

  @AfterEach
  void tearDown() {
    client.shutdownNow();
    client.close();
    if (origin != null) {
      origin.close();
    }
  }

  @AfterAll
  static void noLeaks() {
    NettyLeaks.assertNone();
  }

  private FaultOrigin start(FaultPlan plan) {
    origin = FaultOrigin.start(FaultOriginSettings.loopback().withSeed(42L), plan);
    return origin;
  }

  private FaultOrigin start(Behaviour behaviour) {
    return start(FaultPlan.of(behaviour));
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + origin().port() + path);
  }

  private FaultOrigin origin() {
    FaultOrigin o = origin;
    assertThat(o).isNotNull();
    return o;
  }

  private HttpResponse<byte[]> get(String path) throws IOException, InterruptedException {
    return client.send(
        HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  @Test
  void defaultPlanAnswers200WithTheDeterministicBodyOnOneKeepAliveConnection() throws Exception {
    start(FaultPlan.DEFAULT);

    HttpResponse<byte[]> first = get("/a");
    HttpResponse<byte[]> second = get("/b?q=1");

    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).hasSize(1024);
    assertThat(first.headers().firstValue("content-length")).hasValue("1024");
    for (int i = 0; i < 1024; i++) {
      assertThat(first.body()[i]).as("byte %d", i).isEqualTo(PatternBody.byteAt(i));
    }
    assertThat(second.body()).isEqualTo(first.body());
    OriginStats stats = origin().stats();
    assertThat(stats.requests()).isEqualTo(2);
    assertThat(stats.count(FaultOutcome.OK)).isEqualTo(2);
    assertThat(stats.connections()).as("keep-alive reuses the connection").isEqualTo(1);
  }

  @Test
  void largeBodiesArriveWholeAcrossChunkBoundaries() throws Exception {
    int size = 1_000_003;
    start(Behaviour.builder().bodySize(size).build());

    byte[] body = get("/big").body();

    assertThat(body).hasSize(size);
    for (int i = 0; i < size; i += 997) {
      assertThat(body[i]).as("byte %d", i).isEqualTo(PatternBody.byteAt(i));
    }
    assertThat(body[size - 1]).isEqualTo(PatternBody.byteAt(size - 1));
  }

  @Test
  void statusAndEmptyBodyFollowThePlan() throws Exception {
    start(Behaviour.builder().status(404).bodySize(0).build());

    HttpResponse<byte[]> response = get("/");

    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(response.body()).isEmpty();
  }

  @Test
  void headGetsTheHeadersWithoutABody() throws Exception {
    start(Behaviour.builder().bodySize(500).build());

    HttpResponse<byte[]> head =
        client.send(
            HttpRequest.newBuilder(uri("/"))
                .method("HEAD", HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    HttpResponse<byte[]> after = get("/");

    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.headers().firstValue("content-length")).hasValue("500");
    assertThat(head.body()).isEmpty();
    assertThat(after.body()).hasSize(500);
  }

  @Test
  void fixedLatencyDelaysTheAnswerAtLeastThatLong() throws Exception {
    start(Behaviour.builder().latency(Latency.parse("latency", "fixed:200ms")).build());

    long startNanos = System.nanoTime();
    HttpResponse<byte[]> response = get("/");
    long elapsedMillis = (System.nanoTime() - startNanos) / 1_000_000;

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(elapsedMillis).isGreaterThanOrEqualTo(200);
  }

  @Test
  void seededErrorRateLandsNearTheAskedShare() throws Exception {
    start(Behaviour.builder().errorRate(0.3).errorStatus(503).build());

    int errors = 0;
    int requests = 1000;
    for (int i = 0; i < requests; i++) {
      int status = get("/r").statusCode();
      assertThat(status).isIn(200, 503);
      if (status == 503) {
        errors++;
      }
    }

    // 30 % of 1000 is 300 with a standard deviation of about 14.5: five of them either side.
    assertThat(errors).isBetween(228, 372);
    assertThat(origin().stats().count(FaultOutcome.ERROR)).isEqualTo(errors);
    assertThat(origin().stats().count(FaultOutcome.OK)).isEqualTo(requests - errors);
  }

  @Test
  void resetBeforeAnyAnswerIsAnIoErrorForTheClient() {
    start(Behaviour.builder().resetRate(1.0).build());

    assertThatThrownBy(() -> get("/")).isInstanceOf(IOException.class);
    // The JDK client retries an idempotent GET once after a reset: every attempt was reset.
    OriginStats stats = origin().stats();
    assertThat(stats.count(FaultOutcome.RESET)).isPositive().isEqualTo(stats.requests());
  }

  @Test
  void midBodyResetDeliversTheHeadersAndLessThanTheWholeBody() throws Exception {
    start(Behaviour.builder().bodySize(64 * 1024).midBodyResetRate(1.0).build());

    byte[] received = rawExchange("GET / HTTP/1.1\r\nHost: origin\r\n\r\n");
    String text = new String(received, StandardCharsets.ISO_8859_1);
    int headerEnd = text.indexOf("\r\n\r\n");

    assertThat(text).startsWith("HTTP/1.1 200");
    assertThat(headerEnd).isPositive();
    Matcher length = Pattern.compile("(?i)content-length: (\\d+)").matcher(text);
    assertThat(length.find()).isTrue();
    assertThat(Integer.parseInt(length.group(1))).isEqualTo(64 * 1024);
    assertThat(received.length - (headerEnd + 4)).isLessThan(64 * 1024);
    assertThat(origin().stats().count(FaultOutcome.MID_BODY_RESET)).isEqualTo(1);
  }

  @Test
  void hangNeverAnswersSoTheClientTimesOut() throws Exception {
    FaultOrigin o = start(FaultPlan.DEFAULT);
    assertThat(get("/warm-up").statusCode()).isEqualTo(200); // the hung request reuses this one
    o.swapPlan(FaultPlan.of(Behaviour.builder().hangRate(1.0).build())).get();

    assertThatThrownBy(() ->
            client.send(
                HttpRequest.newBuilder(uri("/")).timeout(Duration.ofMillis(300)).build(),
                HttpResponse.BodyHandlers.ofByteArray()))
        .isInstanceOf(HttpTimeoutException.class);
    // On a loaded machine the origin may read the request only after the client gave up.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(o.stats().count(FaultOutcome.HANG)).isEqualTo(1));
  }

  @Test
  void garbageIsAParseErrorForTheClient() {
    start(Behaviour.builder().garbageRate(1.0).build());

    assertThatThrownBy(() -> get("/"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("status line");
    assertThat(origin().stats().count(FaultOutcome.GARBAGE)).isEqualTo(1);
  }

  @Test
  void garbageBytesAreNotAnHttpResponse() throws Exception {
    start(Behaviour.builder().garbageRate(1.0).build());

    byte[] received = rawExchange("GET / HTTP/1.1\r\nHost: origin\r\n\r\n");

    assertThat(received).isEqualTo(FaultHandler.GARBAGE);
  }

  @Test
  void refusingClosesTheListenerAndTheOpenConnectionsAndRecoveryBindsTheSamePort()
      throws Exception {
    FaultOrigin o = start(FaultPlan.DEFAULT);
    int port = o.port();
    try (Socket idle = new Socket("127.0.0.1", port)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> o.stats().connections() == 1);

      o.swapPlan(o.plan().withRefuse(true)).get();

      assertThatThrownBy(() -> new Socket("127.0.0.1", port).close())
          .isInstanceOf(ConnectException.class);
      idle.setSoTimeout(10_000);
      assertThat(idle.getInputStream().read()).as("open connection closed").isEqualTo(-1);
    }

    o.swapPlan(o.plan().withRefuse(false)).get();

    assertThat(o.port()).isEqualTo(port);
    assertThat(get("/").statusCode()).isEqualTo(200);
  }

  @Test
  void startingRefusedStillReportsThePortAndAcceptsOnRecovery() throws Exception {
    FaultOrigin o = start(FaultPlan.DEFAULT.withRefuse(true));

    assertThatThrownBy(() -> new Socket("127.0.0.1", o.port()).close())
        .isInstanceOf(ConnectException.class);
    o.resetPlan().get();
    assertThat(o.plan().refuse()).isTrue(); // the initial plan refuses
    o.swapPlan(FaultPlan.DEFAULT).get();
    assertThat(get("/").statusCode()).isEqualTo(200);
  }

  @Test
  void healthzFollowsThePlanOrAnswersAsToldWithoutFaults() throws Exception {
    FaultOrigin o = start(Behaviour.builder().errorRate(1.0).errorStatus(503).build());

    assertThat(get("/healthz").statusCode()).as("follow: the outage shows").isEqualTo(503);
    o.swapPlan(o.plan().withHealth(Health.UP)).get();
    assertThat(get("/healthz").statusCode()).as("up: a lying health check").isEqualTo(200);
    assertThat(get("/other").statusCode()).isEqualTo(503);
    o.swapPlan(FaultPlan.DEFAULT.withHealth(Health.DOWN)).get();
    assertThat(get("/healthz").statusCode()).isEqualTo(503);
    assertThat(get("/other").statusCode()).isEqualTo(200);
    o.swapPlan(FaultPlan.DEFAULT).get();
    HttpResponse<byte[]> healthy = get("/healthz");
    assertThat(healthy.statusCode()).isEqualTo(200);
    assertThat(new String(healthy.body(), StandardCharsets.US_ASCII)).isEqualTo("ok\n");

    OriginStats stats = o.stats();
    assertThat(stats.healthChecks()).isEqualTo(4);
    assertThat(stats.trafficRequests()).isEqualTo(2);
  }

  @Test
  void longestPathPrefixOverrideWins() throws Exception {
    start(
        FaultPlan.DEFAULT.withPaths(
            Map.of(
                "/api/", Behaviour.builder().status(500).build(),
                "/api/ok/", Behaviour.builder().status(202).build())));

    assertThat(get("/static/x").statusCode()).isEqualTo(200);
    assertThat(get("/api/x").statusCode()).isEqualTo(500);
    assertThat(get("/api/ok/x").statusCode()).isEqualTo(202);
  }

  @Test
  void cacheHeadersAndIfNoneMatchMakeACacheableOrigin() throws Exception {
    start(Behaviour.builder().cacheControl("max-age=60").etag("\"v1\"").build());

    HttpResponse<byte[]> fresh = get("/page");
    HttpResponse<byte[]> revalidated =
        client.send(
            HttpRequest.newBuilder(uri("/page")).header("If-None-Match", "\"v1\"").build(),
            HttpResponse.BodyHandlers.ofByteArray());
    HttpResponse<byte[]> changed =
        client.send(
            HttpRequest.newBuilder(uri("/page")).header("If-None-Match", "\"v0\"").build(),
            HttpResponse.BodyHandlers.ofByteArray());

    assertThat(fresh.headers().firstValue("cache-control")).hasValue("max-age=60");
    assertThat(fresh.headers().firstValue("etag")).hasValue("\"v1\"");
    assertThat(revalidated.statusCode()).isEqualTo(304);
    assertThat(revalidated.body()).isEmpty();
    assertThat(changed.statusCode()).isEqualTo(200);
    assertThat(changed.body()).hasSize(1024);
  }

  @Test
  void pipelinedRequestsAreAnsweredInOrderEvenWhenTheFirstIsSlower() throws Exception {
    start(
        FaultPlan.DEFAULT.withPaths(
            Map.of(
                "/slow",
                Behaviour.builder()
                    .status(201)
                    .bodySize(3)
                    .latency(Latency.parse("latency", "fixed:150ms"))
                    .build(),
                "/fast",
                Behaviour.builder().status(202).bodySize(3).build())));

    byte[] received =
        rawExchange(
            "GET /slow HTTP/1.1\r\nHost: o\r\n\r\n"
                + "GET /fast HTTP/1.1\r\nHost: o\r\n\r\n"
                + "GET /fast HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n");
    String text = new String(received, StandardCharsets.ISO_8859_1);

    Matcher statuses = Pattern.compile("HTTP/1.1 (\\d{3})").matcher(text);
    StringBuilder order = new StringBuilder();
    while (statuses.find()) {
      order.append(statuses.group(1)).append(' ');
    }
    assertThat(order.toString()).isEqualTo("201 202 202 ");
  }

  @Test
  void malformedRequestGets400() throws Exception {
    start(FaultPlan.DEFAULT);

    byte[] received = rawExchange("NOT A REQUEST\r\n\r\n");

    assertThat(new String(received, StandardCharsets.ISO_8859_1)).startsWith("HTTP/1.1 400");
    assertThat(origin().stats().count(FaultOutcome.BAD_REQUEST)).isEqualTo(1);
  }

  @Test
  void aTakenPortIsRefusedAtStartWithWhatExpectedAndFound() {
    FaultOrigin first = start(FaultPlan.DEFAULT);

    assertThatThrownBy(() ->
            FaultOrigin.start(
                    FaultOriginSettings.loopback().withPort(first.port()), FaultPlan.DEFAULT)
                .close())
        .isInstanceOf(java.io.UncheckedIOException.class)
        .hasMessageStartingWith(
            "origin listener : could not bind 127.0.0.1:"
                + first.port()
                + " (expected: a free port, found: ");
  }

  @Test
  void closingTwiceIsHarmless() {
    FaultOrigin o = start(FaultPlan.DEFAULT);
    o.close();
    o.close();
  }

  /** Sends {@code request} on a fresh socket and reads until the origin closes or resets. */
  private byte[] rawExchange(String request) throws IOException {
    ByteArrayOutputStream received = new ByteArrayOutputStream();
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", origin().port()), 5_000);
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] buffer = new byte[8192];
      try {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          received.write(buffer, 0, n);
        }
      } catch (IOException reset) {
        // A reset ends the exchange: what arrived before it is the answer.
      }
    }
    return received.toByteArray();
  }
}
