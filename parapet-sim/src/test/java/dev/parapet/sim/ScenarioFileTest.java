package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.parapet.core.breaker.Mode;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScenarioFileTest {

  static final String VALID =
      """
      name: my-api
      description: a 20 s brownout behind 2 PoPs
      fleet: {pops: 2, servers_per_pop: 2, workers_per_server: 400, rate_per_server: 200}
      traffic: {sick_share: 80%, healthy_median: 30ms}
      cache: {hit_ratio: 30%, stale_if_error: 50%}
      origin:
        workers: 400
        queue: 2000
        abandoned: serve
        slow_threshold: 400ms
        timeline:
          - {name: healthy, duration: 5s, median: 60ms}
          - {name: brownout, duration: 20s, median: 2s, sigma: 0.4, hang_rate: 10%}
          - {name: down, duration: 5s, down: true}
          - {name: recovery, duration: 10s, median: 60ms}
      variants:
        - name: unprotected
          retry: {mode: naive}
          timeouts: [8s]
        - name: protected
          retry: {mode: budget, ratio: 20%, min_concurrency: 5}
          breaker: {failure_rate: 40%, min_requests: 50, open: {base: 5s, max: 1m, jitter: 20%}}
          timeouts: [8s, 5s, 3s]
      """;

  @Test
  void validFileBuildsAScenarioThatRuns() throws Exception {
    Scenario sc = ScenarioFile.parse(VALID, "my.yaml");
    assertThat(sc.name()).isEqualTo("my-api");
    assertThat(sc.servers()).isEqualTo(4);
    assertThat(sc.sickShare()).isEqualTo(0.8);
    assertThat(sc.timeline()).hasSize(4);
    assertThat(sc.timeline().get(1).hangRate()).isEqualTo(0.1);
    assertThat(sc.timeline().get(2).down()).isTrue();
    assertThat(sc.variants().get(1).breaker()).isNotNull();
    assertThat(sc.variants().get(1).breaker().failureRate()).isEqualTo(0.4);
    assertThat(sc.variants().get(1).tierTimeoutsMillis()).containsExactly(8000L, 5000L, 3000L);
    assertThat(sc.capacity()).isEqualTo(new OriginCapacity(400, 2000, true));
    assertThat(sc.cache()).isEqualTo(new EdgeCache(0.3, 0.5));

    List<RunResult> runs = Scenarios.runAll(sc, 3);
    assertThat(runs.get(1).opens()).isPositive();
    assertThat(runs.get(1).fastFailShare()).isPositive();
    assertThat(runs.get(0).opens()).isZero();
    assertThat(Report.summary(runs)).contains("scenario my-api", "unprotected", "protected");
  }

  @Test
  void everyErrorIsReportedWithItsPath() {
    String bad =
        """
        fleet: {pops: 0, workers: 10}
        origin:
          timeline:
            - {name: healthy, duration: soon, median: 60ms}
            - {duration: 5s, error_rate: 150%}
        variants:
          - name: v
            retry: {mode: sometimes}
            breaker: {failure_rate: 150%, half_open: {probes: 2, required: 3}}
            timeouts: [8s, 5s, 3s, 1s]
        """;
    assertThatThrownBy(() -> ScenarioFile.parse(bad, "bad.yaml"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> {
          List<String> errors = ((ConfigException) e).errors();
          assertThat(errors)
              .anyMatch(s -> s.startsWith("name: required"))
              .anyMatch(s -> s.startsWith("fleet.pops: must be in [1, 100000], was 0"))
              .anyMatch(s -> s.startsWith("fleet.workers: unknown key"))
              .anyMatch(s -> s.startsWith("origin.timeline[0].duration: must be a duration"))
              .anyMatch(s -> s.startsWith("origin.timeline[1].name: required"))
              .anyMatch(s -> s.startsWith("origin.timeline[1].error_rate: must be in [0%, 100%]"))
              .anyMatch(s -> s.startsWith("variants[0].retry.mode: must be one of"))
              .anyMatch(s -> s.startsWith("variants[0].breaker.failure_rate: must be in"))
              .anyMatch(s -> s.startsWith("variants[0].timeouts: must list 1 to 3"));
          assertThat(e.getMessage()).startsWith("bad.yaml: ");
        });
  }

  @Test
  void serviceTimeDistributionsAndCapacityAreRead() throws Exception {
    String yaml =
        """
        name: x
        origin:
          workers: 8
          timeline:
            - {name: a, duration: 1s, distribution: exponential, mean: 40ms}
            - {name: b, duration: 1s, distribution: fixed, median: 25ms}
            - {name: c, duration: 1s, median: 100ms, sigma: 0.5}
        variants: [{name: v}]
        """;
    Scenario sc = ScenarioFile.parse(yaml, "d.yaml");
    assertThat(sc.timeline().get(0).distribution()).isEqualTo(OriginPhase.Distribution.EXPONENTIAL);
    assertThat(sc.timeline().get(0).meanMillis()).isEqualTo(40.0);
    assertThat(sc.timeline().get(1).distribution()).isEqualTo(OriginPhase.Distribution.FIXED);
    assertThat(sc.timeline().get(1).meanMillis()).isEqualTo(25.0);
    assertThat(sc.timeline().get(2).meanMillis()).isCloseTo(100 * Math.exp(0.125), within(1e-9));
    // Unbounded queue and dropped abandoned work unless said otherwise.
    assertThat(sc.capacity()).isEqualTo(new OriginCapacity(8, OriginCapacity.UNBOUNDED, false));
    assertThat(sc.capacityRps(0)).isCloseTo(200.0, within(1e-9));
    assertThat(sc.cache()).isEqualTo(EdgeCache.NONE);
  }

  @Test
  void capacityAndCacheErrorsCarryThePath() {
    String bad =
        """
        name: x
        cache: {hit_ratio: 120%, stale: 1}
        origin:
          queue: 10
          abandoned: later
          capacity_rps: 7000
          timeline:
            - {name: a, distribution: gamma}
            - {name: b, distribution: exponential, median: 10ms, sigma: 0.2}
            - {name: c, mean: 10ms}
        variants: [{name: v}]
        """;
    assertThatThrownBy(() -> ScenarioFile.parse(bad, "c.yaml"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> {
          List<String> errors = ((ConfigException) e).errors();
          assertThat(errors)
              .anyMatch(s -> s.startsWith("cache.hit_ratio: must be in [0%, 100%], was 120%"))
              .anyMatch(s -> s.startsWith("cache.stale: unknown key"))
              .anyMatch(s -> s.startsWith("origin.capacity_rps: unknown key"))
              .anyMatch(s -> s.startsWith("origin.abandoned: must be drop or serve, was 'later'"))
              .anyMatch(s -> s.startsWith("origin.queue: needs workers"))
              .anyMatch(s -> s.startsWith("origin.timeline[0].distribution: must be one of"))
              .anyMatch(s -> s.startsWith("origin.timeline[1].median: not for an exponential"))
              .anyMatch(s -> s.startsWith("origin.timeline[1].sigma: only for distribution"))
              .anyMatch(s -> s.startsWith("origin.timeline[2].mean: not for a log-normal"));
        });
  }

  @Test
  void breakerBuilderErrorsCarryThePath() {
    String bad =
        """
        name: x
        origin: {timeline: [{name: a, duration: 1s}]}
        variants:
          - name: v
            breaker: {half_open: {probes: 2, required: 3}}
        """;
    assertThatThrownBy(() -> ScenarioFile.parse(bad, "b.yaml"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e ->
            assertThat(((ConfigException) e).errors())
                .containsExactly(
                    "variants[0].breaker: half_open.required : 3 (expected: in [1, 2])"));
  }

  @Test
  void deadlinePolicyAndAdmissionQueueAreReadPerVariant() throws Exception {
    String yaml =
        """
        name: x
        origin: {timeline: [{name: a, duration: 1s}]}
        variants:
          - name: defaults
          - name: set
            deadline: {reserve: 100ms, min_useful: 30ms}
            limit: {algorithm: fixed, initial: 10, queue: 25}
        """;
    Scenario sc = ScenarioFile.parse(yaml, "d.yaml");
    Variant defaults = sc.variants().get(0);
    assertThat(defaults.deadlines().reserveNanos()).isEqualTo(50_000_000L);
    assertThat(defaults.deadlines().minUsefulNanos()).isEqualTo(20_000_000L);
    assertThat(defaults.limit()).isNull();
    Variant set = sc.variants().get(1);
    assertThat(set.deadlines().reserveNanos()).isEqualTo(100_000_000L);
    assertThat(set.deadlines().minUsefulNanos()).isEqualTo(30_000_000L);
    assertThat(set.limit()).isNotNull();
    assertThat(set.limit().queue()).isEqualTo(25);
    assertThatThrownBy(() ->
            ScenarioFile.parse(
                yaml.replace("min_useful: 30ms", "min_useful: 0ms, slack: 1s"), "d.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("variants[1].deadline.slack: unknown key")
        .hasMessageContaining("variants[1].deadline.min_useful: must be > 0");
  }

  @Test
  void notYamlIsOneClearError() {
    assertThatThrownBy(() -> ScenarioFile.parse("name: [unclosed", "x.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("not valid YAML");
  }

  @Test
  void policyFileAcceptsTheProxysBreakerBlock() throws Exception {
    var p =
        ScenarioFile.parsePolicy(
            "breaker: {mode: shadow, failure_rate: 25%, window: 5s, buckets: 50}", "p.yaml");
    assertThat(p.failureRate()).isEqualTo(0.25);
    assertThat(p.window().toSeconds()).isEqualTo(5);
    assertThat(p.mode()).isEqualTo(Mode.SHADOW);
    assertThatThrownBy(() -> ScenarioFile.parsePolicy("failure_rate: 20%\nbogus: 1", "p.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("bogus: unknown key");
  }
}
