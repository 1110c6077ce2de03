package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code origins.NAME.fleet_limit}: values, defaults, and every mistake at once at its path. */
class FleetLimitConfigTest {
  private static final String HEAD =
      """
      origins:
        api:
          hosts: [127.0.0.1:9001]
      """;
  private static final String ROUTES =
      """
      routes:
        - match: {prefix: /}
          origin: api
      """;

  private static FleetLimitConfig parse(String fleet) throws Exception {
    OriginConfig o =
        ConfigLoader.parse(
                HEAD + "    fleet_limit: " + fleet + "\n" + ROUTES, "t.yaml", Path.of("."))
            .config()
            .origins()
            .get("api");
    assertThat(o).isNotNull();
    return o.fleetLimit();
  }

  @Test
  void theIssuesExampleReadsAsWritten() throws Exception {
    FleetLimitConfig f =
        parse(
            "{rate: 5000/s, burst: 500, redis: redis://127.0.0.1:6379, key: origin-api,"
                + " instances: 3}");
    assertThat(f)
        .isEqualTo(
            new FleetLimitConfig(
                5000,
                500,
                URI.create("redis://127.0.0.1:6379"),
                "origin-api",
                3,
                null,
                Duration.ofMillis(5)));
  }

  @Test
  void defaultsAndOtherUnits() throws Exception {
    FleetLimitConfig f = parse("{rate: 600/min, redis: 'redis://10.0.0.5:6380/2'}");
    assertThat(f.ratePerSecond()).isEqualTo(10.0);
    assertThat(f.burst()).as("a tenth of a second of the rate, at least one").isEqualTo(1);
    assertThat(f.key()).isEqualTo("parapet:fleet:api");
    assertThat(f.instances()).isEqualTo(1);
    assertThat(parse("off")).isNull();
  }

  @Test
  void everyMistakeIsReportedAtOnceAtItsPath() {
    java.util.List<String> errors =
        ConfigValidationTest.errors(
            HEAD
                + "    fleet_limit: {burst: 5, lease: 9, key: 'a b', instances: 0, timeout: 2s,"
                + " redis: 'http://x:1', colour: red}\n"
                + ROUTES);
    assertThat(String.join("\n", errors))
        .contains("origins.api.fleet_limit.rate")
        .contains("origins.api.fleet_limit.redis")
        .contains("origins.api.fleet_limit.lease")
        .contains("origins.api.fleet_limit.key")
        .contains("origins.api.fleet_limit.instances")
        .contains("origins.api.fleet_limit.timeout")
        .contains("origins.api.fleet_limit.colour");
  }
}
