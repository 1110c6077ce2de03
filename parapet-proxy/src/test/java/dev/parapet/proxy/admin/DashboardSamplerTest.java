package dev.parapet.proxy.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.parapet.core.breaker.CircuitBreaker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The sampler reads meters by their DESIGN.md names, with time passed in (no clock, no sleep). */
class DashboardSamplerTest {
  private static final long SECOND = 1_000_000_000L;
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final DashboardSampler sampler = new DashboardSampler(registry, List::<CircuitBreaker>of);

  private Counter requests(String outcome) {
    return Counter.builder("parapet.requests")
        .tag("route", "api")
        .tag("outcome", outcome)
        .register(registry);
  }

  @Test
  void theFirstReadingIsABaselineThenCountersBecomeRatesByGroup() {
    requests("success").increment(100); // before the dashboard started: not a rate
    sampler.sample(0, 0);
    assertThat(sampler.since(0)).isEmpty();

    requests("success").increment(10);
    requests("slow").increment(2);
    requests("breaker_open").increment(4);
    requests("response_timeout").increment(6);
    requests("failure_status").increment(8);
    sampler.sample(2_000, 2 * SECOND);

    DashboardSampler.Sample s = sampler.since(0).get(0);
    assertThat(s.seconds()).isEqualTo(2.0);
    assertThat(s.requests())
        .containsEntry("fresh", 6.0)
        .containsEntry("503", 2.0)
        .containsEntry("504", 3.0)
        .containsEntry("other", 4.0)
        .containsEntry("stale", 0.0)
        .containsEntry("shed", 0.0);
    assertThat(s.limit()).isNull();
    assertThat(s.inflight()).isNull();
    assertThat(s.shedByPriority()).isNull();
    assertThat(s.p50Millis()).isNull();
  }

  @Test
  void metricsRegisteredLaterShowUpByName() {
    sampler.sample(0, 0);
    sampler.sample(1_000, SECOND);
    assertThat(sampler.since(0).get(0).limit()).isNull();

    // Registered after the sampler started, as other parts of the proxy will.
    AtomicInteger limit = new AtomicInteger(200);
    Gauge.builder("parapet.concurrency.limit", limit, AtomicInteger::get).register(registry);
    Gauge.builder("parapet.inflight", () -> 37).register(registry);
    Counter.builder("parapet.shed")
        .tag("priority", "4")
        .tag("reason", "limit")
        .register(registry)
        .increment(5);
    Counter.builder("parapet.cache").tag("status", "stale").register(registry).increment(3);
    sampler.sample(2_000, 2 * SECOND);

    DashboardSampler.Sample s = sampler.since(1).get(0);
    assertThat(s.limit()).isEqualTo(200.0);
    assertThat(s.inflight()).isEqualTo(37.0);
    assertThat(s.shedByPriority()).containsEntry("4", 5.0);
    assertThat(s.requests()).containsEntry("shed", 5.0).containsEntry("stale", 3.0);
  }

  @Test
  void latencyQuantilesAreThoseOfTheLastInterval() {
    Timer t =
        Timer.builder("parapet.request.duration")
            .tag("route", "api")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofSeconds(60))
            .register(registry);
    t.record(30, TimeUnit.SECONDS); // before the baseline: must not weigh on later quantiles
    sampler.sample(0, 0);
    for (int i = 0; i < 98; i++) {
      t.record(10, TimeUnit.MILLISECONDS);
    }
    t.record(2, TimeUnit.SECONDS);
    t.record(2, TimeUnit.SECONDS);
    sampler.sample(1_000, SECOND);

    DashboardSampler.Sample s = sampler.since(0).get(0);
    // Bucket upper bounds: the first bound at or above the value.
    assertThat(s.p50Millis()).isBetween(10.0, 12.0);
    assertThat(s.p99Millis()).isBetween(2_000.0, 2_400.0);

    sampler.sample(2_000, 2 * SECOND);
    assertThat(sampler.since(1).get(0).p50Millis()).as("no requests, no quantile").isNull();
  }

  @Test
  void theRingKeepsTheLastFiveMinutes() {
    for (int i = 0; i <= DashboardSampler.CAPACITY + 10; i++) {
      sampler.sample(i * 1_000L, i * SECOND);
    }
    List<DashboardSampler.Sample> kept = sampler.since(0);
    assertThat(kept).hasSize(DashboardSampler.CAPACITY);
    assertThat(kept.get(kept.size() - 1).seq()).isEqualTo(DashboardSampler.CAPACITY + 10);
    assertThat(sampler.since(DashboardSampler.CAPACITY + 9)).hasSize(1);
    assertThat(kept.get(0).seconds()).isCloseTo(1.0, within(1e-9));
  }

  @Test
  void outcomesGroupByWhatTheUserGot() {
    assertThat(DashboardSampler.group("success")).isEqualTo("fresh");
    assertThat(DashboardSampler.group("slow")).isEqualTo("fresh");
    assertThat(DashboardSampler.group("breaker_open")).isEqualTo("503");
    assertThat(DashboardSampler.group("connection_limit")).isEqualTo("503");
    assertThat(DashboardSampler.group("deadline_too_short")).isEqualTo("504");
    assertThat(DashboardSampler.group("connect_timeout")).isEqualTo("504");
    assertThat(DashboardSampler.group("stale_if_error")).isEqualTo("stale");
    assertThat(DashboardSampler.group("shed")).isEqualTo("shed");
    assertThat(DashboardSampler.group("connection_refused")).isEqualTo("other");
    assertThat(DashboardSampler.group("no_route")).isEqualTo("other");
  }
}
