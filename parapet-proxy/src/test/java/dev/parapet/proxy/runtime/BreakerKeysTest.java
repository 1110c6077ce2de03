package dev.parapet.proxy.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.testing.PathOrigin;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The breaker keys that act outside the core's policy, through a real proxy started from YAML:
 * failure statuses, a route's own classification and scope, synthetic half-open probes, and active
 * health checks opening a breaker.
 */
class BreakerKeysTest {
  private final HttpClient http = HttpClient.newHttpClient();
  @TempDir Path dir;
  private final PathOrigin origin;
  private @Nullable ProxyRuntime runtime;

  BreakerKeysTest() throws Exception {
    origin = new PathOrigin("o");
  }

  @AfterEach
  void stop() {
    if (runtime != null) {
      runtime.close();
    }
    origin.close();
  }

  /** Starts a proxy from {@code body} (origins and routes), {@code %d} being the origin's port. */
  private ProxyRuntime start(String body) throws Exception {
    Path file = dir.resolve("p.yaml");
    Files.writeString(
        file,
        "listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\n"
            + body.replace("%d", Integer.toString(origin.port())));
    runtime =
        ProxyRuntime.start(
            ConfigLoader.load(file).config(), Ticker.system(), RandomSource.seeded(7), 1);
    return runtime;
  }

  private int get(String path) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + runtime.proxy().port() + path))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private State state(Scope scope, String name) {
    CircuitBreaker b = runtime.proxy().breakers().find(BreakerKey.of(scope, name));
    return b == null ? State.CLOSED : b.state();
  }

  /** Fast-opening breaker settings without the connect-failure trip. */
  private static final String QUICK =
      "min_requests: 5, connect_failures: {count: 0}, open: {base: 30s, jitter: 0%}";

  @Test
  void failureStatusesAreTheOriginsChoice() throws Exception {
    origin.status.set(404);
    start(
        """
        origins:
          strict: {hosts: [127.0.0.1:%d], retry: {attempts: 1}, breaker: {%s, failure_statuses: [404, 5xx]}}
          plain: {hosts: [127.0.0.1:%d], retry: {attempts: 1}, breaker: {%s}}
        routes:
          - {match: {prefix: /strict/}, origin: strict, cache: off}
          - {match: {prefix: /plain/}, origin: plain, cache: off}
        """
            .replace("%s", QUICK));
    for (int i = 0; i < 8; i++) {
      get("/strict/x");
      get("/plain/x");
    }
    assertThat(state(Scope.ROUTE, "*/strict/")).isEqualTo(State.OPEN);
    assertThat(state(Scope.ROUTE, "*/plain/")).isEqualTo(State.CLOSED);
    int before = origin.requests.get();
    assertThat(get("/strict/y")).isEqualTo(503);
    assertThat(get("/plain/y")).isEqualTo(404);
    assertThat(origin.requests.get()).isEqualTo(before + 1);
  }

  @Test
  void aRouteJudgesItsOwnResponsesAndMayHaveItsOwnBreakerUnderASharedScope() throws Exception {
    origin.status.set(404);
    start(
        """
        origins:
          api: {hosts: [127.0.0.1:%d], retry: {attempts: 1}, breaker: {scope: origin, %s}}
        routes:
          - {match: {prefix: /own/}, origin: api, cache: off, breaker: {scope: route, failure_statuses: [4xx]}}
          - {match: {prefix: /shared/}, origin: api, cache: off}
        """
            .replace("%s", QUICK));
    for (int i = 0; i < 8; i++) {
      get("/own/x");
      get("/shared/x");
    }
    // The route's own breaker, judging 404 a failure, opened; the origin's shared breaker, judging
    // by the default statuses, did not.
    assertThat(state(Scope.ROUTE, "*/own/")).isEqualTo(State.OPEN);
    assertThat(state(Scope.ORIGIN, "api")).isEqualTo(State.CLOSED);
    assertThat(runtime.proxy().breakers().find(BreakerKey.of(Scope.ROUTE, "*/shared/"))).isNull();
    assertThat(get("/shared/y")).isEqualTo(404);
  }

  @Test
  void syntheticProbesDecideHalfOpenWithoutUserRequests() throws Exception {
    origin.status.set(500);
    origin.healthStatus.set(500);
    start(
        """
        origins:
          api:
            hosts: [127.0.0.1:%d]
            retry: {attempts: 1}
            breaker:
              min_requests: 5
              connect_failures: {count: 0}
              open: {base: 100ms, max: 200ms, jitter: 0%}
              half_open: {probes: 2, required: 2, spacing: 10ms}
              ramp: {over: 0s}
              probe: {path: /healthz}
        routes:
          - {match: {prefix: /}, origin: api, cache: off}
        """);
    for (int i = 0; i < 6; i++) {
      get("/x");
    }
    assertThat(state(Scope.ROUTE, "*/")).isIn(State.OPEN, State.HALF_OPEN);
    int live = origin.requests.get();
    // Failing probes keep it from closing; user requests are refused meanwhile and never probe.
    await().atMost(Duration.ofSeconds(20)).until(() -> origin.healthChecks.get() >= 3);
    assertThat(get("/y")).isEqualTo(503);
    assertThat(state(Scope.ROUTE, "*/")).isNotEqualTo(State.CLOSED);
    // The probe path recovers (live answers are still 500): the probes alone close the breaker.
    origin.healthStatus.set(200);
    await().atMost(Duration.ofSeconds(20)).until(() -> state(Scope.ROUTE, "*/") == State.CLOSED);
    assertThat(origin.requests.get()).isEqualTo(live);
    assertThat(runtime.proxy().breakerProbesSent()).isGreaterThanOrEqualTo(3);
  }

  @Test
  void activeHealthChecksOpenTheBreakerOfHostsTheyHoldOut() throws Exception {
    start(
        """
        origins:
          api:
            hosts: [127.0.0.1:%d]
            health_check: {interval: 50ms, timeout: 50ms, unhealthy: 2, healthy: 2}
        routes:
          - {match: {prefix: /}, origin: api, cache: off}
        """);
    assertThat(get("/x")).isEqualTo(200);
    assertThat(state(Scope.ROUTE, "*/")).isEqualTo(State.CLOSED);
    origin.healthStatus.set(503);
    await().atMost(Duration.ofSeconds(20)).until(() -> state(Scope.ROUTE, "*/") == State.OPEN);
    assertThat(get("/y")).isEqualTo(503);
  }
}
