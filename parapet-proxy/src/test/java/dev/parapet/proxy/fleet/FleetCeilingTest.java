package dev.parapet.proxy.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.fleet.FleetLimiter;
import dev.parapet.core.fleet.FleetMode;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.runtime.ProxyRuntime;
import dev.parapet.proxy.testing.RedisServer;
import dev.parapet.proxy.testing.TestOrigin;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three Parapets sharing one Redis key and one origin, offered three times their ceiling of 40
 * attempts/s: the origin sees the ceiling (±10 %) while Redis serves, while it is down (each proxy
 * keeps its local share of 13.3/s) and after it is back (the proxies share again). Counts over
 * windows measured by the test, never latencies; mode changes awaited, not slept for. The rate is
 * modest so that a loaded two-core machine, running three proxies, an origin and the clients in one
 * JVM under coverage, still offers well above the ceiling.
 */
class FleetCeilingTest {
  private static final int RATE = 40;
  private static final int PROXIES = 3;
  private static final double TOLERANCE = 0.10;

  @TempDir Path dir;
  private RedisServer redis;
  private TestOrigin origin;
  private final List<ProxyRuntime> proxies = new ArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1) // no h2c upgrade: each request on a kept-alive
          .connectTimeout(Duration.ofSeconds(5)) // HTTP/1.1 connection
          .build();
  private ExecutorService load;
  private volatile boolean running = true;

  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong ok = new AtomicLong();
  private final AtomicLong ceilingSheds = new AtomicLong();
  private final ConcurrentLinkedQueue<String> otherAnswers = new ConcurrentLinkedQueue<>();

  @BeforeEach
  void start() throws Exception {
    redis = RedisServer.start(dir);
    origin = new TestOrigin();
    Files.writeString(dir.resolve("admin.token"), "t0ken\n");
    String key = "fleet-test-" + System.nanoTime();
    for (int i = 0; i < PROXIES; i++) {
      int port;
      int adminPort;
      try (ServerSocket a = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
          ServerSocket b = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        port = a.getLocalPort();
        adminPort = b.getLocalPort();
      }
      // A generous lease timeout: a loaded two-core machine may stall a thread for longer than
      // the default 5 ms, which would only make the test run on local shares.
      String yaml =
          """
          name: edge-%d
          listen: 127.0.0.1:%d
          admin: {listen: 127.0.0.1:%d, token_file: admin.token}
          origins:
            api:
              hosts: [127.0.0.1:%d]
              retry: {attempts: 1}
              fleet_limit: {rate: %d/s, burst: 8, lease: 2, redis: '%s', key: %s, instances: %d, timeout: 50ms}
          routes:
            - match: {prefix: /}
              origin: api
              cache: off
          """
              .formatted(i, port, adminPort, origin.port(), RATE, redis.uri(), key, PROXIES);
      proxies.add(
          ProxyRuntime.start(
              ConfigLoader.parse(yaml, "edge-" + i + ".yaml", dir).config(),
              Ticker.system(),
              RandomSource.seeded(i),
              1));
    }
    awaitMode(FleetMode.SHARED);
  }

  @AfterEach
  void stop() throws Exception {
    running = false;
    if (load != null) {
      load.shutdownNow();
      load.awaitTermination(10, TimeUnit.SECONDS);
    }
    proxies.forEach(ProxyRuntime::close);
    origin.close();
    redis.close();
  }

  /**
   * 3 × 40 requests/s in all: four paced workers per proxy, 10 requests/s each, one request at a
   * time (a bounded number of kept-alive connections, unlike an open-loop flood that would open a
   * connection per late answer on a loaded machine).
   */
  private void offerThriceTheCeiling() {
    int workers = 4 * PROXIES;
    load = Executors.newFixedThreadPool(workers);
    long periodNanos = 1_000_000_000L * workers / (3 * RATE);
    for (int w = 0; w < workers; w++) {
      int port = proxies.get(w % PROXIES).proxy().port();
      load.execute(() -> {
        long next = System.nanoTime();
        while (!Thread.currentThread().isInterrupted() && running) {
          send(port);
          next += periodNanos;
          long wait = next - System.nanoTime();
          if (wait > 0) {
            try {
              TimeUnit.NANOSECONDS.sleep(wait);
            } catch (InterruptedException e) {
              return;
            }
          }
        }
      });
    }
  }

  private void send(int port) {
    sent.incrementAndGet();
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/x"))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() == 200) {
        ok.incrementAndGet();
      } else if (r.statusCode() == 503 && r.body().contains("fleet-limit")) {
        ceilingSheds.incrementAndGet();
      } else {
        otherAnswers.add(r.statusCode() + " " + r.headers().map() + " " + r.body());
      }
    } catch (java.io.IOException e) {
      otherAnswers.add("client error: " + e);
    } catch (InterruptedException e) {
      sent.decrementAndGet(); // stopped before an answer: not part of the run
      Thread.currentThread().interrupt();
    }
  }

  private void awaitMode(FleetMode mode) {
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(() -> {
          for (ProxyRuntime p : proxies) {
            FleetLimiter l = Objects.requireNonNull(p.fleet().limiter("api"));
            assertThat(l.mode()).isEqualTo(mode);
          }
        });
  }

  /** Origin calls and offered requests over a window of about {@code millis}. */
  private record Window(long calls, long offered, double seconds) {}

  private Window window(long millis) throws InterruptedException {
    long calls0 = origin.calls.get();
    long sent0 = sent.get();
    long t0 = System.nanoTime();
    Thread.sleep(millis);
    long calls1 = origin.calls.get();
    long sent1 = sent.get();
    double seconds = (System.nanoTime() - t0) / 1e9;
    return new Window(calls1 - calls0, sent1 - sent0, seconds);
  }

  private void assertAboutTheCeiling(String phase, Window w) {
    double ceiling = RATE * w.seconds();
    System.err.printf(
        Locale.ROOT,
        "fleet ceiling, %s: origin %d calls in %.2f s = %.1f/s (ceiling %d/s, offered %.1f/s)%n",
        phase,
        w.calls(),
        w.seconds(),
        w.calls() / w.seconds(),
        RATE,
        w.offered() / w.seconds());
    assertThat(w.offered())
        .as(
            "%s: the load generator kept up (offered %d in %.2f s)",
            phase, w.offered(), w.seconds())
        .isGreaterThan((long) (1.3 * ceiling));
    assertThat((double) w.calls())
        .as(
            "%s: origin calls in %.2f s against a ceiling of %d/s (so far: %d ok, %d ceiling"
                + " sheds, other answers like %s)",
            phase, w.seconds(), RATE, ok.get(), ceilingSheds.get(), otherAnswers.peek())
        .isBetween((1 - TOLERANCE) * ceiling, (1 + TOLERANCE) * ceiling);
  }

  /** The admin API's origin status (the fleet limit's mode among it). */
  private String adminOrigins(ProxyRuntime p) throws Exception {
    return http.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + p.admin().port() + "/admin/origins"))
                .header("Authorization", "Bearer t0ken")
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  private String scrape(ProxyRuntime p) {
    return p.proxy().metrics().scrape();
  }

  @Test
  void threeProxiesKeepOneCeilingThroughARedisOutage() throws Exception {
    for (int i = 0; i < 20; i++) {
      send(proxies.get(i % PROXIES).proxy().port()); // warm up: classes loaded, connections open
    }
    offerThriceTheCeiling();
    Thread.sleep(1_000); // the burst and the first leases pass

    Window shared = window(4_000);
    assertAboutTheCeiling("shared", shared);
    assertThat(ceilingSheds.get()).as("the ceiling was reached and answered 503").isPositive();

    redis.stop();
    awaitMode(FleetMode.LOCAL_FALLBACK);
    for (ProxyRuntime p : proxies) {
      assertThat(scrape(p)).containsPattern("parapet_fleet_shared\\{origin=\"api\"[^}]*\\} 0\\.0");
    }
    Thread.sleep(300);
    Window down = window(4_000);
    assertAboutTheCeiling("Redis down, local shares", down);
    for (ProxyRuntime p : proxies) {
      assertThat(scrape(p))
          .containsPattern("parapet_fleet_redis_errors_total\\{origin=\"api\"[^}]*\\} [1-9]");
    }

    assertThat(adminOrigins(proxies.get(0))).containsPattern("\"mode\"\\s*:\\s*\"local_fallback\"");
    redis.startAgain();
    awaitMode(FleetMode.SHARED);
    assertThat(adminOrigins(proxies.get(0))).containsPattern("\"mode\"\\s*:\\s*\"shared\"");
    for (ProxyRuntime p : proxies) {
      assertThat(scrape(p)).containsPattern("parapet_fleet_shared\\{origin=\"api\"[^}]*\\} 1\\.0");
    }
    Thread.sleep(300);
    Window back = window(4_000);
    assertAboutTheCeiling("Redis back, shared again", back);

    running = false;
    load.shutdown();
    assertThat(load.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertThat(ok.get() + ceilingSheds.get() + otherAnswers.size()).isEqualTo(sent.get());
    assertThat(otherAnswers).as("answers other than 200 and the ceiling's own 503").isEmpty();
    for (ProxyRuntime p : proxies) {
      assertThat(scrape(p))
          .containsPattern("parapet_shed_total\\{[^}]*reason=\"fleet_limit\"[^}]*\\} [1-9]");
    }
  }
}
