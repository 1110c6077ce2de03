package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.ProbeMode;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.outcome.StatusSet;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A route's {@code breaker:} fields merge over its origin's, field by field, nested ones too. */
class BreakerOverrideTest {

  static final String CONFIG =
      """
      origins:
        api:
          hosts: [127.0.0.1:9001]
          breaker:
            window: 20s
            buckets: 200
            min_requests: 50
            failure_rate: 40%
            slow: {threshold: 800ms, weight: 0.25, rate: 30%}
            open: {base: 10s, max: 2m, jitter: 10%}
            half_open: {probes: 5, spacing: 1s, required: 3, max_latency: 2s}
            ramp: {from: 10%, over: 1m}
            probe: {path: /status}
      routes:
        - match: {prefix: /checkout/}
          origin: api
          breaker:
            failure_rate: 20%
            mode: shadow
            slow: {rate: 10%}
            half_open: {required: 5}
            probe: off
        - match: {prefix: /other/}
          origin: api
        - match: {prefix: /counted/}
          origin: api
          breaker: {window_size: 500, open: {max: 20s}}
      """;

  static ProxyConfig config() throws InvalidConfigException {
    return ConfigDefaultsTest.load(CONFIG);
  }

  @Test
  void routeOverridesMergeOverTheOriginsFields() throws Exception {
    ProxyConfig c = config();
    BreakerPolicy p = c.routes().get(0).breaker().toBreakerPolicy();
    // overridden by the route
    assertThat(p.failureRate()).isEqualTo(0.20);
    assertThat(p.mode()).isEqualTo(Mode.SHADOW);
    assertThat(p.slowRate()).isEqualTo(0.10);
    assertThat(p.probesRequired()).isEqualTo(5);
    assertThat(p.probeMode()).isEqualTo(ProbeMode.LIVE);
    // inherited from the origin, including siblings of overridden nested fields
    assertThat(c.routes().get(0).breaker().scope()).isEqualTo(Scope.ROUTE);
    assertThat(p.window()).isEqualTo(Duration.ofSeconds(20));
    assertThat(p.buckets()).isEqualTo(200);
    assertThat(p.minRequests()).isEqualTo(50);
    assertThat(p.slowWeight()).isEqualTo(0.25);
    assertThat(c.routes().get(0).breaker().slow().threshold())
        .isEqualTo(new BreakerConfig.SlowThreshold.Absolute(Duration.ofMillis(800)));
    assertThat(p.probes()).isEqualTo(5);
    assertThat(p.probeSpacing()).isEqualTo(Duration.ofSeconds(1));
    assertThat(p.probeMaxLatency()).isEqualTo(Duration.ofSeconds(2));
    assertThat(p.openBase()).isEqualTo(Duration.ofSeconds(10));
    assertThat(p.openMax()).isEqualTo(Duration.ofMinutes(2));
    assertThat(p.openJitter()).isEqualTo(0.10);
    assertThat(p.rampFrom()).isEqualTo(0.10);
    assertThat(p.rampOver()).isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void aRouteWithoutOverridesHasItsOriginsPolicyAndTheOriginIsUntouched() throws Exception {
    ProxyConfig c = config();
    BreakerPolicy origin = c.origin("api").breaker().toBreakerPolicy();
    assertThat(c.routes().get(1).breaker().toBreakerPolicy()).isEqualTo(origin);
    assertThat(origin.failureRate()).isEqualTo(0.40);
    assertThat(origin.mode()).isEqualTo(Mode.ENFORCE);
    assertThat(origin.probeMode()).isEqualTo(ProbeMode.SYNTHETIC);
    assertThat(c.origin("api").breaker().probePath()).isEqualTo("/status");
    assertThat(origin).isNotEqualTo(c.routes().get(0).breaker().toBreakerPolicy());
  }

  @Test
  void aRouteCanSwitchToACountWindow() throws Exception {
    BreakerPolicy p = config().routes().get(2).breaker().toBreakerPolicy();
    assertThat(p.windowKind()).isEqualTo(BreakerPolicy.WindowKind.COUNT);
    assertThat(p.windowSize()).isEqualTo(500);
    assertThat(p.openMax()).isEqualTo(Duration.ofSeconds(20));
    assertThat(p.failureRate()).isEqualTo(0.40);
  }

  @Test
  void overridesAreValidatedAgainstTheMergedValues() {
    // required 4 is fine for the origin's 5 probes but not for the route's 2.
    assertThat(
            ConfigValidationTest.errors(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001], breaker: {half_open: {probes: 5, required: 4}}}
                routes:
                  - origin: api
                    breaker: {half_open: {probes: 2}, ramp: {from: 0%}, scoop: route}
                """))
        .containsExactly(
            "routes[0].breaker.half_open.required: must be in [1, half_open.probes (2)], was 4",
            "routes[0].breaker.ramp.from: must be in (0%, 100%], was 0%",
            "routes[0].breaker.scoop: unknown key 'scoop' (did you mean 'scope'?)");
  }

  @Test
  void underASharedScopeARouteMayOnlyJudgeItsResponsesOrTakeABreakerOfItsOwn() throws Exception {
    String why =
        ": has no effect: this route's breaker is shared (scope: origin); set scope: route for a"
            + " breaker of the route's own, or move it to the origin";
    assertThat(
            ConfigValidationTest.errors(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001], breaker: {scope: origin}}
                routes:
                  - origin: api
                    breaker: {failure_rate: 20%, slow: {threshold: 2s, rate: 10%}, failure_statuses: [5xx]}
                  - {origin: api, match: {prefix: /h/}, breaker: {scope: host, mode: shadow}}
                """))
        .containsExactly(
            "routes[0].breaker.failure_rate" + why,
            "routes[0].breaker.slow.rate" + why,
            "routes[1].breaker.mode" + why.replace("scope: origin", "scope: host"));
    ProxyConfig c =
        ConfigDefaultsTest.load(
            """
            origins:
              api: {hosts: [127.0.0.1:9001], breaker: {scope: origin, failure_statuses: [500-599]}}
            routes:
              - {origin: api, breaker: {slow: {threshold: 2s}, failure_statuses: [5xx, 429, 404]}}
              - {origin: api, match: {prefix: /own/}, breaker: {scope: route, failure_rate: 20%}}
            """);
    assertThat(c.origin("api").breaker().failureStatuses())
        .isEqualTo(StatusSet.parse(java.util.List.of("5xx")));
    assertThat(c.routes().get(0).breaker().failureStatuses())
        .isEqualTo(StatusSet.parse(java.util.List.of("500-599", "429", "404")));
    assertThat(c.routes().get(1).breaker().scope()).isEqualTo(Scope.ROUTE);
    assertThat(c.routes().get(1).breaker().failureRate()).isEqualTo(0.20);
  }

  @Test
  void failureStatusesAreCodesClassesOrRanges() throws Exception {
    assertThat(BreakerConfig.DEFAULTS.failureStatuses()).isEqualTo(StatusSet.DEFAULT_FAILURES);
    assertThat(
            ConfigValidationTest.errors(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001], breaker: {failure_statuses: [503, 6xx, 500-400, {a: 1}]}}
                routes: [{origin: api}]
                """))
        .containsExactly(
            "origins.api.breaker.failure_statuses[1]: must be a status like 503, a class like 5xx or"
                + " a range like 500-504 within 100-599, was '6xx'",
            "origins.api.breaker.failure_statuses[2]: must be a status like 503, a class like 5xx or"
                + " a range like 500-504 within 100-599, was '500-400'",
            "origins.api.breaker.failure_statuses[3]: must be a status like 503, a class like 5xx or"
                + " a range like 500-504, was a mapping");
    ProxyConfig none =
        ConfigDefaultsTest.load(
            """
            origins:
              api: {hosts: [127.0.0.1:9001], breaker: {failure_statuses: []}}
            routes: [{origin: api}]
            """);
    assertThat(none.origin("api").breaker().failureStatuses().contains(503)).isFalse();
  }

  @Test
  void hostsTakeWeightsAndRingHashTakesAHashKey() throws Exception {
    ProxyConfig c =
        ConfigDefaultsTest.load(
            """
            origins:
              a: {hosts: [127.0.0.1:1, {address: 127.0.0.1:2, weight: 5}], balancer: round_robin}
              b: {hosts: [127.0.0.1:3], balancer: ring_hash, hash_key: {cookie: session}}
              c: {hosts: [127.0.0.1:4], balancer: ring_hash, hash_key: path}
            routes: [{origin: a}]
            """);
    assertThat(c.origin("a").weights()).containsExactly(1, 5);
    assertThat(c.origin("a").hashKey()).isEqualTo(OriginConfig.HashKey.PATH);
    assertThat(c.origin("b").hashKey())
        .isEqualTo(new OriginConfig.HashKey(OriginConfig.HashKey.Source.COOKIE, "session"));
    assertThat(c.origin("c").hashKey()).isEqualTo(OriginConfig.HashKey.PATH);
    assertThat(
            ConfigValidationTest.errors(
                """
                origins:
                  a: {hosts: [{address: 127.0.0.1:2, weight: 0}, {weight: 2}], hash_key: {header: X}}
                  b: {hosts: [127.0.0.1:3], balancer: ring_hash, hash_key: {header: X, cookie: y}}
                  c: {hosts: [127.0.0.1:4], balancer: ring_hash, hash_key: {header: "a b"}}
                routes: [{origin: a}]
                """))
        .containsExactly(
            "origins.a.hosts[0].weight: must be in [1, 1000], was 0",
            "origins.a.hosts[1].address: required: host:port like 127.0.0.1:9001",
            "origins.a.hash_key: has no effect: only balancer: ring_hash hashes a request key, the"
                + " balancer is least_request",
            "origins.b.hash_key: must name exactly one of header or cookie, like {header:"
                + " X-User-Id}",
            "origins.c.hash_key.header: must be a header or cookie name (letters, digits, - and _),"
                + " was 'a b'");
  }

  @Test
  void theCoresRefusalsAreMappedOntoYamlPaths() {
    // The loader checks every rule itself first; this is the safety net for a rule the core adds.
    MappingReader block =
        MappingReader.of(
            null,
            "routes[0].breaker",
            new YamlNode.Location(7, 5),
            new java.util.ArrayList<>(),
            BreakerConfigReader.KEYS);
    assertThat(BreakerConfigReader.coreProblem(block, "failure_rate : 1.5 (expected: in (0, 1])"))
        .isEqualTo(
            new ConfigProblem(
                ConfigProblem.Severity.ERROR,
                "routes[0].breaker.failure_rate",
                "must be in (0, 1], was 1.5",
                7,
                5));
    assertThat(BreakerConfigReader.coreProblem(block, "something else").toString())
        .isEqualTo("routes[0].breaker: something else");
  }

  @Test
  void relativeSlowThreshold() throws Exception {
    ProxyConfig c =
        ConfigDefaultsTest.load(
            """
            origins:
              api: {hosts: [127.0.0.1:9001], breaker: {slow: {threshold: 3x p95, floor: 200ms}}}
            routes: [{origin: api}]
            """);
    BreakerConfig.SlowThreshold t = c.origin("api").breaker().slow().threshold();
    assertThat(t)
        .isEqualTo(new BreakerConfig.SlowThreshold.Relative(3.0, 0.95, Duration.ofMillis(200)));
    // 3 x 100 ms p95 = 300 ms; a very fast origin (p95 1 ms) uses the 200 ms floor; while the
    // quantile is unknown (negative) nothing is slow.
    assertThat(t.toSlowCallThreshold(now -> 100_000_000L).thresholdNanos(0))
        .isEqualTo(300_000_000L);
    assertThat(t.toSlowCallThreshold(now -> 1_000_000L).thresholdNanos(0)).isEqualTo(200_000_000L);
    assertThat(t.toSlowCallThreshold(now -> -1L).thresholdNanos(0)).isEqualTo(Long.MAX_VALUE);
    assertThat(
            ConfigValidationTest.errors(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001], breaker: {slow: {floor: 50ms}}}
                routes: [{origin: api}]
                """))
        .containsExactly(
            "origins.api.breaker.slow.floor: has no effect with the absolute slow.threshold 500ms:"
                + " the floor bounds a relative threshold like 3x p95");
    assertThat(
            ConfigValidationTest.errors(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001], breaker: {slow: {threshold: fast}}}
                routes: [{origin: api}]
                """))
        .containsExactly(
            "origins.api.breaker.slow.threshold: must be a duration like 500ms or a multiple of a"
                + " percentile like 3x p95, was 'fast'");
  }

  @Test
  void hedgeDelayIsAPercentileOrADurationAndSwitchesTakeOnAndOff() throws Exception {
    ProxyConfig c =
        ConfigDefaultsTest.load(
            """
            origins:
              a: {hosts: [127.0.0.1:1], hedge: {delay: p99}}
              b: {hosts: [127.0.0.1:2], hedge: {delay: 40ms, budget: 5%}}
              c: {hosts: [127.0.0.1:3], hedge: off}
              d: {hosts: [127.0.0.1:4], hedge: on, health_check: on}
            routes:
              - {origin: a}
              - {origin: b, match: {prefix: /b/}}
              - {origin: c, match: {prefix: /c/}, cache: off}
              - {origin: d, match: {prefix: /d/}, cache: on}
            """);
    assertThat(c.origin("a").hedge().delay()).isEqualTo(new HedgeConfig.Delay.Percentile(0.99));
    assertThat(c.origin("b").hedge().delay())
        .isEqualTo(new HedgeConfig.Delay.Fixed(Duration.ofMillis(40)));
    assertThat(c.origin("b").hedge().budget()).isEqualTo(0.05);
    assertThat(c.origin("c").hedge().enabled()).isFalse();
    assertThat(c.origin("d").hedge()).isEqualTo(HedgeConfig.DEFAULTS);
    assertThat(c.origin("d").healthCheck()).isEqualTo(HealthCheckConfig.DEFAULTS);
    assertThat(c.routes().get(2).cache().enabled()).isFalse();
    assertThat(c.routes().get(3).cache()).isEqualTo(RouteConfig.Cache.DEFAULTS);
  }
}
