package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.ProbeMode;
import dev.parapet.core.breaker.Scope;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every default is DESIGN.md's, written out here as literals (not read back from the code). */
class ConfigDefaultsTest {

  static final String MINIMAL =
      """
      origins:
        api: {hosts: [127.0.0.1:9001]}
      routes:
        - origin: api
      """;

  static ProxyConfig load(String yaml) throws InvalidConfigException {
    return ConfigLoader.parse(yaml, "test.yaml", Path.of(".")).config();
  }

  @Test
  void topLevelDefaults() throws Exception {
    ProxyConfig c = load(MINIMAL);
    assertThat(c.name()).isEqualTo("parapet");
    assertThat(c.listen()).isEqualTo(new HostPort("127.0.0.1", 8080));
    assertThat(c.admin().listen()).isEqualTo(new HostPort("127.0.0.1", 9901));
    assertThat(c.admin().tokenFile()).isNull();
    assertThat(c.deadline())
        .isEqualTo(
            new DeadlineConfig(
                Duration.ofSeconds(8), Duration.ofMillis(50), Duration.ofMillis(20)));
    AdmissionConfig a = c.admission();
    assertThat(a.limit())
        .isEqualTo(new AdmissionConfig.Limit(AdmissionConfig.Algorithm.GRADIENT2, 200, 20, 2000));
    assertThat(a.queue())
        .isEqualTo(new AdmissionConfig.Queue(250, Duration.ofMillis(20), Duration.ofMillis(100)));
    assertThat(a.priority().header()).isEqualTo("Priority");
    assertThat(c.trustedProxies()).isEmpty();
    assertThat(a.priority().defaultPriority()).isEqualTo(2);
    assertThat(a.retryAfter())
        .isEqualTo(new AdmissionConfig.RetryAfter(Duration.ofSeconds(1), Duration.ofSeconds(5)));
    assertThat(c.overload().heap().shedLow()).isEqualTo(0.85);
    assertThat(c.overload().heap().stopAccepting()).isEqualTo(0.95);
    assertThat(c.overload().cpu().shedLow()).isEqualTo(0.75);
    assertThat(c.overload().eventLoopLag().shedLow()).isEqualTo(Duration.ofMillis(250));
    assertThat(c.overload().eventLoopLag().stopAccepting()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.http2())
        .isEqualTo(new Http2Config(100, 32 * 1024, 65_535, 200, Duration.ofSeconds(30)));
    assertThat(c.drainTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.cache().maxSize().bytes()).isEqualTo(256L * 1024 * 1024);
    assertThat(c.cache().staleIfError()).isEqualTo(Duration.ofSeconds(300));
    // stale only when someone permitted it (RFC 9111 §4.2.4): never stale-while-revalidate by
    // default; the operator's stale-if-error covers an origin that could not be reached
    assertThat(c.cache().staleWhileRevalidate()).isEqualTo(Duration.ZERO);
    assertThat(c.cache().staleIfErrorOn())
        .containsExactly("timeout", "connect_error", "breaker_open", "shed", "pool_limit");
    assertThat(c.cache().heuristicFraction()).isEqualTo(0.10);
    assertThat(c.cache().heuristicMax()).isEqualTo(Duration.ofHours(24));
  }

  @Test
  void originDefaults() throws Exception {
    OriginConfig o = load(MINIMAL).origin("api");
    assertThat(o.hosts()).containsExactly(new HostPort("127.0.0.1", 9001));
    assertThat(o.balancer()).isEqualTo(OriginConfig.Balancer.LEAST_REQUEST);
    assertThat(o.connectTimeout()).isEqualTo(Duration.ofMillis(250));
    assertThat(o.timeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(o.limits()).isEqualTo(new OriginConfig.Limits(2048, 1024, 4096));
    assertThat(o.retry().attempts()).isEqualTo(2);
    assertThat(o.retry().on().connectFailure()).isTrue();
    assertThat(o.retry().on().timeout()).isFalse();
    assertThat(o.retry().on().statuses().contains(503)).isTrue();
    assertThat(o.retry().on().statuses().contains(502)).isFalse();
    assertThat(o.retry().on()).hasToString("[connect_failure, 503]");
    assertThat(o.retry().budget()).isEqualTo(new RetryConfig.Budget(0.20, 5));
    assertThat(o.retry().backoff())
        .isEqualTo(new RetryConfig.Backoff(Duration.ofMillis(25), Duration.ofMillis(250)));
    assertThat(o.hedge().enabled()).isFalse();
    assertThat(o.outlier())
        .isEqualTo(
            new OutlierConfig(
                5,
                0.50,
                200,
                Duration.ofSeconds(10),
                Duration.ofSeconds(30),
                Duration.ofSeconds(300),
                0.50));
    assertThat(o.healthCheck().enabled()).isFalse();
    assertThat(o.slowStart()).isEqualTo(Duration.ofSeconds(30));
    assertThat(o.fallback()).isNull();
  }

  @Test
  void hedgeAndHealthCheckBlocksSwitchOnWithDefaults() throws Exception {
    OriginConfig o =
        load("""
        origins:
          api: {hosts: [127.0.0.1:9001], hedge: {}, health_check: {}}
        routes: [{origin: api}]
        """)
            .origin("api");
    assertThat(o.hedge())
        .isEqualTo(
            new HedgeConfig(
                true, new HedgeConfig.Delay.Percentile(0.95), Duration.ofMillis(20), 0.15));
    assertThat(o.healthCheck())
        .isEqualTo(
            new HealthCheckConfig(
                true, "/healthz", Duration.ofSeconds(5), Duration.ofSeconds(1), 2, 3));
  }

  @Test
  void breakerDefaultsAreDesignsAndTheCoresDefaults() throws Exception {
    BreakerConfig b = load(MINIMAL).origin("api").breaker();
    assertThat(b.scope()).isEqualTo(Scope.ROUTE);
    assertThat(b.mode()).isEqualTo(Mode.ENFORCE);
    assertThat(b.window()).isEqualTo(Duration.ofSeconds(10));
    assertThat(b.buckets()).isEqualTo(100);
    assertThat(b.minRequests()).isEqualTo(200);
    assertThat(b.failureRate()).isEqualTo(0.50);
    assertThat(b.slow().threshold())
        .isEqualTo(new BreakerConfig.SlowThreshold.Absolute(Duration.ofMillis(500)));
    assertThat(b.slow().weight()).isEqualTo(0.5);
    assertThat(b.slow().rate()).isEqualTo(0.35);
    assertThat(b.connectFailures())
        .isEqualTo(new BreakerConfig.ConnectFailures(3, Duration.ofSeconds(10)));
    assertThat(b.open())
        .isEqualTo(new BreakerConfig.Open(Duration.ofSeconds(30), Duration.ofMinutes(5), 0.20));
    assertThat(b.halfOpen().probes()).isEqualTo(3);
    assertThat(b.halfOpen().spacing()).isEqualTo(Duration.ofMillis(500));
    assertThat(b.halfOpen().required()).isEqualTo(2);
    assertThat(b.halfOpen().maxLatency()).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.ramp()).isEqualTo(new BreakerConfig.Ramp(0.05, Duration.ofSeconds(30)));
    assertThat(b.probePath()).isNull();
    assertThat(b.toBreakerPolicy()).isEqualTo(BreakerPolicy.defaults());
  }

  @Test
  void routeDefaultsComeFromDeadlineAndAdmission() throws Exception {
    ProxyConfig c =
        load(
            """
            deadline: {default: 4s}
            admission: {priority: {default: 3}}
            origins:
              api: {hosts: [127.0.0.1:9001]}
            routes:
              - origin: api
            """);
    RouteConfig r = c.routes().get(0);
    assertThat(r.match()).isEqualTo(new RouteConfig.Match(null, "/"));
    assertThat(r.timeout()).isEqualTo(Duration.ofSeconds(4));
    assertThat(r.priority()).isEqualTo(3);
    assertThat(r.cache()).isEqualTo(new RouteConfig.Cache(true, Duration.ZERO, null));
    assertThat(r.cache().staleOnSlowAuto()).isTrue();
    assertThat(r.breaker()).isEqualTo(c.origin("api").breaker());
  }

  @Test
  void perClientLimitIsOffByDefaultAndReadWhenGiven() throws Exception {
    assertThat(load(MINIMAL).admission().perClient().maxInflight()).isZero();
    ProxyConfig c = load("admission: {per_client: {max_inflight: 32}}\n" + MINIMAL);
    assertThat(c.admission().perClient().maxInflight()).isEqualTo(32);
  }

  @Test
  void routesRetryIdempotentMethodsOnlyUnlessTheyOptIn() throws Exception {
    assertThat(load(MINIMAL).routes().get(0).retryNonIdempotent()).isFalse();
    ProxyConfig c =
        load(
            """
            origins:
              api: {hosts: [127.0.0.1:9001]}
            routes:
              - origin: api
                retry_non_idempotent: true
            """);
    assertThat(c.routes().get(0).retryNonIdempotent()).isTrue();
    assertThatThrownBy(() ->
            load(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001]}
                routes:
                  - origin: api
                    retry_non_idempotent: sometimes
                """))
        .hasMessageContaining(
            "routes[0].retry_non_idempotent: must be true or false, was 'sometimes'");
  }

  @Test
  void eventLoopLagThresholdsAreReadAndOrdered() throws Exception {
    ProxyConfig c =
        load("overload: {event_loop_lag: {shed_low: 50ms, stop_accepting: 400ms}}\n" + MINIMAL);
    assertThat(c.overload().eventLoopLag().shedLow()).isEqualTo(Duration.ofMillis(50));
    assertThat(c.overload().eventLoopLag().stopAccepting()).isEqualTo(Duration.ofMillis(400));
    assertThatThrownBy(() ->
            load(
                "overload: {event_loop_lag: {shed_low: 500ms, stop_accepting: 100ms}}\n" + MINIMAL))
        .hasMessageContaining(
            "overload.event_loop_lag.stop_accepting: must be greater than event_loop_lag.shed_low"
                + " (500ms), was 100ms");
  }

  @Test
  void designDocumentExampleLoadsWithEveryValueAsWritten(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("admin.token"), "secret\n");
    String yaml =
        """
        name: edge-1                    # appears in Proxy-Status, Cache-Status, Via, logs
        listen: 127.0.0.1:8080
        admin: {listen: 127.0.0.1:9901, token_file: admin.token}
        deadline: {default: 8s, reserve: 50ms, min_useful: 20ms}
        admission:
          limit: {algorithm: gradient2, initial: 200, min: 20, max: 2000}
          queue: {max: 250, target_sojourn: 20ms, interval: 100ms}
          priority: {header: Priority, default: 2}
          retry_after: {min: 1s, max: 5s}
        overload: {heap: {shed_low: 0.85, stop_accepting: 0.95}, cpu: {shed_low: 0.75}}
        cache: {max_size: 256MiB, stale_if_error: 300s, stale_while_revalidate: 60s}
        origins:
          api:
            hosts: [127.0.0.1:9001, 127.0.0.1:9002]
            balancer: least_request
            connect_timeout: 250ms
            timeout: 3s
            limits: {max_connections: 2048, max_pending: 1024, max_requests: 4096}
            retry: {attempts: 2, on: [connect_failure, 503], budget: {ratio: 20%, min_concurrency: 5}, backoff: {base: 25ms, max: 250ms}}
            hedge: {delay: p95, min_delay: 20ms, budget: 15%}
            breaker:
              scope: route              # origin | route | host | shard
              mode: enforce             # enforce | shadow
              window: 10s
              buckets: 100
              min_requests: 200
              failure_rate: 50%
              slow: {threshold: 500ms, weight: 0.5, rate: 35%}
              connect_failures: {count: 3, within: 10s}
              open: {base: 30s, max: 5m, jitter: 20%}
              half_open: {probes: 3, spacing: 500ms, required: 2, max_latency: 1s}
              ramp: {from: 5%, over: 30s}
            outlier: {consecutive_5xx: 5, failure_percentage: 50%, min_requests: 200, interval: 10s, base_ejection: 30s, max_ejection: 300s, max_ejected: 50%}
            health_check: {path: /healthz, interval: 5s, timeout: 1s, healthy: 2, unhealthy: 3}
            slow_start: 30s
            fallback: api_secondary       # another origin pool to use while this one's breaker is open
          api_secondary:
            hosts: [127.0.0.1:9011]
          static:
            hosts: [127.0.0.1:9003]
        routes:
          - match: {host: shop.example.com, prefix: /api/}
            origin: api
            timeout: 8s
            priority: 2
            breaker: {failure_rate: 25%}     # overrides the origin's breaker fields for this route
            cache: off
          - match: {prefix: /static/}
            origin: static
            cache: {default_ttl: 60s}
        """;
    LoadedConfig loaded = ConfigLoader.parse(yaml, "design.yaml", dir);
    assertThat(loaded.warnings()).isEmpty();
    ProxyConfig c = loaded.config();
    assertThat(c.name()).isEqualTo("edge-1");
    assertThat(c.admin().tokenFile()).isEqualTo(dir.resolve("admin.token"));
    assertThat(c.origins().keySet()).containsExactly("api", "api_secondary", "static");
    OriginConfig api = c.origin("api");
    assertThat(api.hosts()).hasSize(2);
    assertThat(api.fallback()).isEqualTo("api_secondary");
    assertThat(api.hedge().enabled()).isTrue();
    assertThat(api.healthCheck().enabled()).isTrue();
    // Written out, the origin's breaker is exactly the defaults.
    assertThat(api.breaker()).isEqualTo(BreakerConfig.DEFAULTS);
    RouteConfig apiRoute = c.routes().get(0);
    assertThat(apiRoute.match()).isEqualTo(new RouteConfig.Match("shop.example.com", "/api/"));
    assertThat(apiRoute.cache().enabled()).isFalse();
    assertThat(apiRoute.breaker().failureRate()).isEqualTo(0.25);
    assertThat(apiRoute.breaker().toBreakerPolicy().probeMode()).isEqualTo(ProbeMode.LIVE);
    RouteConfig staticRoute = c.routes().get(1);
    assertThat(staticRoute.cache())
        .isEqualTo(new RouteConfig.Cache(true, Duration.ofSeconds(60), null));
    assertThat(staticRoute.timeout()).isEqualTo(Duration.ofSeconds(8));
    assertThat(c.routes()).extracting(RouteConfig::origin).isEqualTo(List.of("api", "static"));
  }
}
