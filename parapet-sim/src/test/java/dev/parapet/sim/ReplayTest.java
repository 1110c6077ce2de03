package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.breaker.BreakerPolicy;
import java.io.BufferedReader;
import java.io.StringReader;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplayTest {
  static final long T0 = 1_764_000_000L;

  /** /api healthy for 30 s then all 503 for 20 s, then healthy; /static always healthy. 50 rps. */
  static String csvLog() {
    StringBuilder b = new StringBuilder("time,route,status,latency_ms\n");
    for (int i = 0; i < 80 * 50; i++) {
      double t = T0 + i / 50.0;
      boolean broken = i >= 30 * 50 && i < 50 * 50;
      b.append(String.format(Locale.ROOT, "%.2f,/api,%d,%d%n", t, broken ? 503 : 200, 40));
      b.append(String.format(Locale.ROOT, "%.2f,/static,200,5%n", t));
    }
    return b.toString();
  }

  static List<Replay.LogRecord> parse(String log) throws Exception {
    return Replay.parse(new BufferedReader(new StringReader(log)), "access.log");
  }

  @Test
  void shadowBreakerOpensOnTheBrokenRouteOnlyAndCountsWhatItWouldReject() throws Exception {
    Map<String, Replay.RouteResult> r =
        Replay.run(parse(csvLog()), BreakerPolicy.defaults(), Duration.ofMillis(500));
    Replay.RouteResult api = r.get("/api");
    Replay.RouteResult stat = r.get("/static");
    assertThat(api.requests).isEqualTo(4000);
    assertThat(api.failures).isEqualTo(1000);
    // 200 calls minimum and 50 % failures: the window (10 s of 500 calls) crosses 50 % after 5 s.
    assertThat(api.firstOpenNanos / 1e9).isBetween(34.0, 36.0);
    // It would reject from the opening on, through the outage and while probing and ramping after
    // it (open 30 s, then 30 s of ramp): never before the opening.
    long afterOpen = (80 - (long) (api.firstOpenNanos / 1e9)) * 50;
    assertThat(api.wouldReject).isGreaterThan(1000).isLessThanOrEqualTo(afterOpen);
    assertThat(stat.opens).isZero();
    assertThat(stat.wouldReject).isZero();
    String report = Replay.report(r, BreakerPolicy.defaults());
    assertThat(report).contains("/api", "/static", "CLOSED -> OPEN");
  }

  @Test
  void jsonLinesAndIsoTimesGiveTheSameAnswerAsCsv() throws Exception {
    StringBuilder json = new StringBuilder();
    for (Replay.LogRecord rec : parse(csvLog())) {
      json.append(
          String.format(
              Locale.ROOT,
              "{\"time\":\"%s\",\"route\":\"%s\",\"status\":%d,\"latency_ms\":%d}%n",
              java.time.Instant.ofEpochSecond(T0).plusNanos(rec.timeNanos()),
              rec.route(),
              rec.status(),
              rec.latencyNanos() / 1_000_000));
    }
    var a = Replay.run(parse(csvLog()), BreakerPolicy.defaults(), Duration.ofMillis(500));
    var b = Replay.run(parse(json.toString()), BreakerPolicy.defaults(), Duration.ofMillis(500));
    assertThat(Replay.report(b, BreakerPolicy.defaults()))
        .isEqualTo(Replay.report(a, BreakerPolicy.defaults()));
  }

  @Test
  void badLinesAreReportedWithTheirLineNumber() {
    String log = "time,route,status,latency_ms\n1,/a,200,5\n2,/a,abc,5\nx,/a,200,5\n";
    assertThatThrownBy(() -> parse(log))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("access.log:3:")
        .hasMessageContaining("access.log:4: time : x (expected: epoch seconds");
    assertThatThrownBy(() -> parse("when,route\n1,/a\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("expected: columns time,route,status,latency_ms");
  }

  @Test
  void aStricterPolicyOpensEarlier() throws Exception {
    BreakerPolicy strict = BreakerPolicy.defaults().toBuilder().failureRate(0.2).build();
    var loose = Replay.run(parse(csvLog()), BreakerPolicy.defaults(), Duration.ofMillis(500));
    var tight = Replay.run(parse(csvLog()), strict, Duration.ofMillis(500));
    assertThat(tight.get("/api").firstOpenNanos).isLessThan(loose.get("/api").firstOpenNanos);
  }
}
