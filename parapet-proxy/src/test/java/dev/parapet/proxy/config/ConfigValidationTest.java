package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigValidationTest {

  static InvalidConfigException refused(String yaml) {
    return refused(yaml, Path.of("."));
  }

  static InvalidConfigException refused(String yaml, Path dir) {
    InvalidConfigException e =
        catchThrowableOfType(
            InvalidConfigException.class, () -> ConfigLoader.parse(yaml, "test.yaml", dir));
    assertThat(e).as("configuration should be refused").isNotNull();
    return e;
  }

  static List<String> errors(String yaml) {
    return refused(yaml).errors().stream().map(ConfigProblem::toString).toList();
  }

  static List<String> warnings(String yaml) throws InvalidConfigException {
    return ConfigLoader.parse(yaml, "test.yaml", Path.of(".")).warnings().stream()
        .map(ConfigProblem::toString)
        .toList();
  }

  @Test
  void everyMistakeIsReportedAtOnceWithItsPathInFileOrder() {
    String yaml =
        """
        name: edge 1
        listen: 127.0.0.1:80800
        trusted_proxies: [10.0.0.1/8, nonsense]
        deadline: {default: 8, reserve: 9s}
        admission:
          limit: {algorithm: gradiant2, initial: 5000}
          priority: {trusted_sources: [10.0.0.0/8], default: 7}
        overload: {heap: {shed_low: 0.95, stop_accepting: 0.9}}
        cache: {max_size: 256MB}
        origins:
          api:
            hosts: [127.0.0.1:9001, "[::1]:9002", bad host:1, 127.0.0.1:0]
            balancer: least_requests
            retry: {attempts: 0, on: [connect_failur, 503, 999]}
            breakr: {}
            breaker:
              failure_rate: 150%
              half_open: {probes: 3, required: 4}
              open: {base: 30s, max: 10s, jitter: 100%}
              ramp: {from: 0%}
          static:
            hosts: [127.0.0.1:9002]
        routes:
          - match: {host: shop.example.com, prefix: /api/}
            origin: api
            breaker: {failure_rate: 0%}
          - match: {prefix: static/}
            origin: apii
            timout: 3s
        """;
    assertThat(errors(yaml))
        .containsExactly(
            "name: must be letters, digits, '.', '_' or '-' (it appears in Via and Proxy-Status), was 'edge 1'",
            "listen: must have a port in [0, 65535], was 80800",
            "trusted_proxies[0]: must have zero host bits, was '10.0.0.1/8' (did you mean 10.0.0.0/8?)",
            "trusted_proxies[1]: must be a CIDR like 10.0.0.0/8 or fd00::/8, was 'nonsense'",
            "deadline.default: must be a duration with a unit like 8s or 8ms, was 8",
            "admission.limit.algorithm: must be one of fixed, aimd, vegas, gradient2, was 'gradiant2' (did you mean 'gradient2'?)",
            "admission.limit.initial: must be in [limit.min, limit.max] = [20, 2000], was 5000",
            "admission.priority.trusted_sources: is not a key here: the peers whose Priority header is believed are the top-level trusted_proxies",
            "admission.priority.default: must be in [1, 4], was 7",
            "overload.heap.stop_accepting: must be greater than heap.shed_low (95%), was 90%",
            "cache.max_size: must be a size like 512KiB, 256MiB or 1GiB, was '256MB' (did you mean 256MiB?)",
            "origins.api.hosts[2]: must have an IP address or a host name, was 'bad host' in 'bad host:1'",
            "origins.api.hosts[3]: must have a port in [1, 65535], was 0",
            "origins.api.balancer: must be one of round_robin, least_request, ring_hash, ip_hash, was 'least_requests' (did you mean 'least_request'?)",
            "origins.api.retry.attempts: must be in [1, 10], was 0",
            "origins.api.retry.on[0]: must be connect_failure, timeout or a status like 503, 5xx or 500-504, was 'connect_failur' (did you mean 'connect_failure'?)",
            "origins.api.retry.on[2]: must be connect_failure, timeout or a status like 503, 5xx or 500-504, was 999",
            "origins.api.breakr: unknown key 'breakr' (did you mean 'breaker'?)",
            "origins.api.breaker.failure_rate: must be in (0%, 100%], was 150%",
            "origins.api.breaker.half_open.required: must be in [1, half_open.probes (3)], was 4",
            "origins.api.breaker.open.max: must be >= open.base (30s), was 10s",
            "origins.api.breaker.open.jitter: must be in [0%, 100%), was 100%",
            "origins.api.breaker.ramp.from: must be in (0%, 100%], was 0%",
            "routes[0].breaker.failure_rate: must be in (0%, 100%], was 0%",
            "routes[1].match.prefix: must start with '/', was 'static/'",
            "routes[1].origin: unknown origin 'apii' (known: api, static)",
            "routes[1].timout: unknown key 'timout' (did you mean 'timeout'?)");
  }

  @Test
  void problemsCarryLineAndColumn() {
    InvalidConfigException e =
        refused(
            """
            origins:
              api:
                hosts: [127.0.0.1:9001]
                breaker:
                  failure_rate: 150%
            routes: [{origin: api}]
            """);
    ConfigProblem p = e.errors().get(0);
    assertThat(p.path()).isEqualTo("origins.api.breaker.failure_rate");
    assertThat(p.line()).isEqualTo(5);
    assertThat(p.column()).isEqualTo(21);
    assertThat(p.format("edge.yaml"))
        .isEqualTo(
            "edge.yaml:5:21: origins.api.breaker.failure_rate: must be in (0%, 100%], was 150%");
    assertThat(e.getMessage())
        .isEqualTo(
            "test.yaml: 1 error\norigins.api.breaker.failure_rate: must be in (0%, 100%], was 150%");
  }

  @Test
  void unknownKeysAreErrorsWithASuggestionOrTheKnownKeys() {
    assertThat(
            errors(
                """
                rootes: []
                cache: {stale-if-error: 10s, colour: blue}
                origins:
                  api: {hosts: [127.0.0.1:9001]}
                routes: [{origin: api, match: {prefx: /a/}}]
                """))
        .containsExactly(
            "rootes: unknown key 'rootes' (did you mean 'routes'?)",
            "cache.stale-if-error: unknown key 'stale-if-error' (did you mean 'stale_if_error'?)",
            "cache.colour: unknown key 'colour' (known: max_size, stale_if_error, stale_if_error_on, stale_while_revalidate, heuristic)",
            "routes[0].match.prefx: unknown key 'prefx' (did you mean 'prefix'?)");
  }

  @Test
  void atLeastOneRouteAndOneOrigin() {
    assertThat(errors("name: edge-1\n"))
        .containsExactly(
            "origins: required: at least one origin pool", "routes: required: at least one route");
    assertThat(errors("origins: {api: {hosts: [127.0.0.1:1]}}\nroutes: []\n"))
        .containsExactly("routes: must have at least one route");
    assertThat(errors("")).contains("routes: required: at least one route");
  }

  @Test
  void routesMustNameAKnownOrigin() {
    assertThat(
            errors(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001]}
                  static: {hosts: [127.0.0.1:9002]}
                routes:
                  - {match: {prefix: /api/}, origin: api}
                  - {match: {prefix: /static/}, origin: apii}
                  - {match: {prefix: /x/}}
                """))
        .containsExactly(
            "routes[1].origin: unknown origin 'apii' (known: api, static)",
            "routes[2].origin: required: the origin pool this route sends to (known: api, static)");
  }

  @Test
  void fallbacksMustExistNotBeSelfAndNotCycle() {
    assertThat(
            errors(
                """
                origins:
                  api: {hosts: [127.0.0.1:1], fallback: api}
                  static: {hosts: [127.0.0.1:2], fallback: nope}
                  a: {hosts: [127.0.0.1:3], fallback: b}
                  b: {hosts: [127.0.0.1:4], fallback: c}
                  c: {hosts: [127.0.0.1:5], fallback: a}
                routes: [{origin: api}, {origin: static, match: {prefix: /s/}}, {origin: a, match: {prefix: /a/}}]
                """))
        .containsExactly(
            "origins.api.fallback: must name another origin, was 'api' (itself)",
            "origins.static.fallback: unknown origin 'nope' (known: api, static, a, b, c)",
            "origins.a.fallback: must not lead back to this origin: fallback cycle a -> b -> c -> a");
  }

  @Test
  void aFallbackChainWithoutCycleIsFine() throws Exception {
    ProxyConfig c =
        ConfigLoader.parse(
                """
                origins:
                  a: {hosts: [127.0.0.1:3], fallback: b}
                  b: {hosts: [127.0.0.1:4], fallback: c}
                  c: {hosts: [127.0.0.1:5]}
                routes: [{origin: a}]
                """,
                "t.yaml",
                Path.of("."))
            .config();
    assertThat(c.origin("a").fallback()).isEqualTo("b");
  }

  @Test
  void adminOffLoopbackNeedsATokenFile(@TempDir Path dir) throws Exception {
    String base = "origins: {api: {hosts: [127.0.0.1:1]}}\nroutes: [{origin: api}]\n";
    assertThat(errors(base + "admin: {listen: 0.0.0.0:9901}\n"))
        .containsExactly(
            "admin.token_file: required when admin.listen is off loopback (was 0.0.0.0:9901):"
                + " the admin API can force breakers open and reload configuration");
    assertThat(errors(base + "admin: {listen: '[::]:9901'}\n")).hasSize(1);
    assertThat(errors(base + "admin: {listen: 127.0.0.1:8080}\n"))
        .containsExactly(
            "admin.listen: must differ from listen (127.0.0.1:8080), was 127.0.0.1:8080");

    Files.writeString(dir.resolve("admin.token"), "s3cret\n");
    ProxyConfig ok =
        ConfigLoader.parse(
                base + "admin: {listen: 0.0.0.0:9901, token_file: admin.token}\n", "t", dir)
            .config();
    assertThat(ok.admin().tokenFile()).isEqualTo(dir.resolve("admin.token"));
    InvalidConfigException missing =
        refused(base + "admin: {listen: 0.0.0.0:9901, token_file: missing.token}\n", dir);
    assertThat(missing.errors())
        .singleElement()
        .asString()
        .startsWith("admin.token_file: must be a readable file, was 'missing.token'");
  }

  @Test
  void adminHostsAndReadTokenAreCheckedWithTheirPaths(@TempDir Path dir) throws Exception {
    String base = "origins: {api: {hosts: [127.0.0.1:1]}}\nroutes: [{origin: api}]\n";
    InvalidConfigException e =
        refused(
            """
            admin:
              listen: 127.0.0.1:9901
              hosts: [admin.internal:9901, "bad host", {a: 1}, admin.internal, "[::1]"]
              read_token: required
            """
                + base,
            dir);
    assertThat(e.errors().stream().map(ConfigProblem::toString))
        .containsExactly(
            "admin.hosts[0]: must be a host name or IP address without a port, like"
                + " admin.internal or 10.0.0.5 (any port is accepted), was 'admin.internal:9901'",
            "admin.hosts[1]: must be a host name or IP address without a port, like"
                + " admin.internal or 10.0.0.5 (any port is accepted), was 'bad host'",
            "admin.hosts[2]: must be a host name or IP address without a port, like"
                + " admin.internal or 10.0.0.5 (any port is accepted), was a mapping",
            "admin.token_file: required when admin.read_token is required (was absent): reads"
                + " must carry the bearer token this file holds");
    ConfigProblem readToken = e.errors().get(3);
    assertThat(readToken.line()).isEqualTo(4);
    assertThat(readToken.column()).isEqualTo(15);
    assertThat(errors("admin: {read_token: always}\n" + base))
        .containsExactly("admin.read_token: must be one of optional, required, was 'always'");

    Files.writeString(dir.resolve("empty.token"), " \n");
    assertThat(
            refused("admin: {token_file: empty.token, read_token: required}\n" + base, dir)
                .errors())
        .singleElement()
        .asString()
        .startsWith("admin.token_file: must hold the bearer token, was 'empty.token' (")
        .endsWith("empty.token is empty)");

    Files.writeString(dir.resolve("admin.token"), "s3cret\n");
    AdminConfig ok =
        ConfigLoader.parse(
                """
                admin:
                  token_file: admin.token
                  hosts: [Admin.Internal, 10.0.0.5, "[fd00::5]", "::1"]
                  read_token: required
                """
                    + base,
                "t",
                dir)
            .config()
            .admin();
    assertThat(ok.hosts()).containsExactly("admin.internal", "10.0.0.5", "fd00::5", "::1");
    assertThat(ok.readToken()).isEqualTo(AdminConfig.ReadToken.REQUIRED);
    AdminConfig defaults = ConfigLoader.parse(base, "t", dir).config().admin();
    assertThat(defaults.hosts()).isEmpty();
    assertThat(defaults.readToken()).isEqualTo(AdminConfig.ReadToken.OPTIONAL);
  }

  @Test
  void originTimeoutNotSmallerThanRouteTimeoutIsAWarning() throws Exception {
    assertThat(
            warnings(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001], timeout: 8s}
                routes:
                  - {origin: api, timeout: 8s}
                """))
        .containsExactly(
            "routes[0].timeout: origin 'api' timeout (8s) is not smaller than this route's timeout (8s):"
                + " one slow attempt uses the whole budget, leaving nothing to retry, fail over or"
                + " answer before the caller gives up");
    assertThat(
            warnings(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001], timeout: 3s}
                routes:
                  - {origin: api, timeout: 8s}
                """))
        .isEmpty();
  }

  @Test
  void otherWarnings() throws Exception {
    assertThat(
            warnings(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001]}
                  unused: {hosts: [127.0.0.1:9002], connect_timeout: 5s}
                routes:
                  - {origin: api, match: {prefix: /a/}}
                  - {origin: api, match: {prefix: /a/}}
                """))
        .containsExactly(
            "origins.unused: not used by any route or fallback",
            "origins.unused.connect_timeout: is larger than the origin's timeout (3s), so it never fires, was 5s",
            "routes[1].match: same match as routes[0] (*/a/): this route is never used");
  }

  @Test
  void crossFieldChecks() {
    assertThat(
            errors(
                """
                deadline: {default: 1s, reserve: 1s, min_useful: 2s}
                admission:
                  limit: {min: 50, max: 10}
                  queue: {target_sojourn: 200ms, interval: 100ms}
                  retry_after: {min: 5s, max: 1s}
                origins:
                  api:
                    hosts: [127.0.0.1:9001, 127.0.0.1:9001]
                    retry: {backoff: {base: 1s, max: 10ms}}
                    breaker: {window: 10ms, buckets: 100, window_size: 5}
                    outlier: {base_ejection: 60s, max_ejection: 30s}
                    health_check: {interval: 1s, timeout: 2s, path: healthz}
                routes: [{origin: api}]
                """))
        .containsExactly(
            "deadline.reserve: must be smaller than deadline.default (1s), was 1s",
            "deadline.min_useful: must be smaller than deadline.default (1s), was 2s",
            "admission.limit.max: must be >= limit.min (50), was 10",
            "admission.queue.target_sojourn: must be smaller than queue.interval (100ms), was 200ms",
            "admission.retry_after.max: must be >= retry_after.min (5s), was 1s",
            "origins.api.hosts[1]: duplicate host 127.0.0.1:9001",
            "origins.api.retry.backoff.max: must be >= backoff.base (1s), was 10ms",
            "origins.api.breaker.window_size: must not be set together with window: window: 10s is a"
                + " time window, window_size: 100 a window of the last 100 calls",
            "origins.api.outlier.max_ejection: must be >= outlier.base_ejection (1m), was 30s",
            "origins.api.health_check.timeout: must be <= health_check.interval (1s), was 2s",
            "origins.api.health_check.path: must start with '/', was 'healthz'");
    assertThat(
            errors(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001], breaker: {window: 50ms, buckets: 100}}
                routes: [{origin: api}]
                """))
        .containsExactly(
            "origins.api.breaker.buckets: must leave at least 1ms per bucket (window 50ms allows at most 50), was 100");
  }

  @Test
  void rangesArePrintedInTheFormTheValueWasWrittenIn() {
    assertThat(
            errors(
                """
                overload: {heap: {shed_low: 1.5}, cpu: {shed_low: 120%}}
                origins:
                  api: {hosts: [127.0.0.1:9001], breaker: {slow: {weight: 2}}}
                routes: [{origin: api}]
                """))
        .containsExactly(
            "overload.heap.shed_low: must be in (0, 1], was 1.5",
            "overload.cpu.shed_low: must be in (0%, 100%], was 120%",
            "origins.api.breaker.slow.weight: must be in [0, 1], was 2");
  }

  @Test
  void wrongShapesAreReported() {
    assertThat(
            errors(
                """
                admin: 127.0.0.1:9901
                origins:
                  api:
                    hosts: 127.0.0.1:9001
                    timeout: {seconds: 3}
                    breaker: [1, 2]
                routes: {origin: api}
                """))
        .containsExactly(
            "admin: must be a mapping with keys listen, token_file, hosts, read_token, was"
                + " '127.0.0.1:9901'",
            "origins.api.timeout: must be a duration like 250ms, 3s, 5m or 1h, was a mapping",
            "origins.api.breaker: must be a mapping with keys scope, mode, window, buckets, window_size,"
                + " min_requests, failure_rate, failure_statuses, slow, connect_failures, open, half_open, ramp,"
                + " flapping, probe, was a list",
            "routes: must be a list of routes, was a mapping");
  }

  @Test
  void malformedYamlSaysWhereAndWhat() {
    InvalidConfigException e = refused("origins:\n  api: {hosts: [127.0.0.1:1]\nroutes: []\n");
    assertThat(e.errors()).hasSize(1);
    ConfigProblem p = e.errors().get(0);
    assertThat(p.line()).isEqualTo(3);
    assertThat(p.column()).isEqualTo(1);
    assertThat(p.path()).isEmpty();
    assertThat(p)
        .hasToString(
            "malformed YAML at line 3, column 1: expected ',' or '}', but got <scalar>"
                + " (while parsing a flow mapping started at line 2, column 8)");
  }

  @Test
  void tabsAreReportedWhereTheyAre() {
    InvalidConfigException e = refused("origins:\n\tapi: x\n");
    assertThat(e.errors()).singleElement().extracting(ConfigProblem::line).isEqualTo(2);
    assertThat(e.errors().get(0).message()).startsWith("malformed YAML at line 2, column 1:");
  }

  @Test
  void aliasesAreRefusedNotReadAsTheAnchorsName() {
    assertThat(
            errors(
                """
                origins:
                  api: {hosts: &h [127.0.0.1:1]}
                  web: {hosts: *h}
                routes: [{origin: api}, {origin: web, match: {prefix: /w/}}]
                """))
        .containsExactly(
            "origins.web.hosts: must be written out: YAML aliases are not supported, was *h");
  }

  @Test
  void duplicateKeysAndSecondDocumentsAreErrors() {
    assertThat(
            errors(
                """
                origins: {api: {hosts: [127.0.0.1:1]}}
                routes: [{origin: api}]
                routes: [{origin: api}]
                ---
                name: other
                """))
        .containsExactly(
            "routes: duplicate key (first written at line 2)",
            "must be a single YAML document, found a second one");
  }
}
