package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code cache:} and a route's {@code cache:} block: the stale grants, the heuristic. */
class CacheConfigTest {

  @Test
  void staleIfErrorOnHeuristicAndStaleOnSlowAreRead() throws Exception {
    ProxyConfig c =
        ConfigLoader.parse(
                """
                cache:
                  stale_if_error_on: [5xx, timeout]
                  heuristic: {fraction: 20%, max: 1h}
                origins:
                  api: {hosts: [127.0.0.1:9001]}
                routes:
                  - origin: api
                    cache: {default_ttl: 5s, stale_on_slow: 300ms}
                """,
                "test.yaml", Path.of("."))
            .config();
    assertThat(c.cache().staleIfErrorOn()).containsExactly("5xx", "timeout");
    assertThat(c.cache().heuristicFraction()).isEqualTo(0.20);
    assertThat(c.cache().heuristicMax()).isEqualTo(Duration.ofHours(1));
    assertThat(c.routes().get(0).cache())
        .isEqualTo(new RouteConfig.Cache(true, Duration.ofSeconds(5), Duration.ofMillis(300)));
  }

  @Test
  void staleOnSlowIsAutoByDefaultOrWhenSaidAndZeroTurnsItOff() throws Exception {
    ProxyConfig c =
        ConfigLoader.parse(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001]}
                routes:
                  - {origin: api, match: {prefix: /a/}, cache: {default_ttl: 5s}}
                  - {origin: api, match: {prefix: /b/}, cache: {stale_on_slow: auto}}
                  - {origin: api, match: {prefix: /c/}, cache: {stale_on_slow: 0s}}
                """,
                "test.yaml",
                Path.of("."))
            .config();
    assertThat(c.routes().get(0).cache().staleOnSlowAuto()).isTrue();
    assertThat(c.routes().get(1).cache().staleOnSlowAuto()).isTrue();
    assertThat(c.routes().get(2).cache().staleOnSlow()).isEqualTo(Duration.ZERO);
    assertThat(
            ConfigValidationTest.errors(
                """
                origins:
                  api: {hosts: [127.0.0.1:9001]}
                routes: [{origin: api, cache: {stale_on_slow: soon}}]
                """))
        .anyMatch(e -> e.contains("routes[0].cache.stale_on_slow"));
  }

  @Test
  void heuristicOffIsAZeroFraction() throws Exception {
    ProxyConfig c =
        ConfigLoader.parse(
                """
                cache: {heuristic: off}
                origins:
                  api: {hosts: [127.0.0.1:9001]}
                routes: [{origin: api}]
                """,
                "test.yaml",
                Path.of("."))
            .config();
    assertThat(c.cache().heuristicFraction()).isZero();
  }

  @Test
  void anUnknownTriggerIsAnErrorAtItsPath() {
    assertThat(
            ConfigValidationTest.errors(
                """
                cache: {stale_if_error_on: [timeout, 4xx]}
                origins:
                  api: {hosts: [127.0.0.1:9001]}
                routes: [{origin: api}]
                """))
        .containsExactly(
            "cache.stale_if_error_on[1]: must be one of 5xx, timeout, connect_error,"
                + " breaker_open, shed, pool_limit, was '4xx'");
  }
}
