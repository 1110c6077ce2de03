package dev.parapet.sim.replay;

import static dev.parapet.sim.replay.ReplayLogs.T0;
import static dev.parapet.sim.replay.ReplayLogs.csvLog;
import static dev.parapet.sim.replay.ReplayLogs.replay;
import static dev.parapet.sim.replay.ReplayLogs.source;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.breaker.BreakerPolicy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

class LogReplayTest {
  private static final ReplayOptions O = ReplayOptions.defaults();

  @Test
  void shadowBreakerOpensOnTheBrokenRouteOnlyAndCountsWhatItWouldReject() throws Exception {
    ReplayResult r = replay(csvLog(), O, BreakerPolicy.defaults());
    RouteResult api = r.policies().get(0).route("/api");
    RouteResult stat = r.policies().get(0).route("/static");
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
    assertThat(r.lines()).isEqualTo(8001);
    assertThat(r.records()).isEqualTo(8000);
    assertThat(r.late()).isZero();
    assertThat(ReplayReport.text(r, O)).contains("/api", "/static", "CLOSED -> OPEN");
  }

  @Test
  void troubleIsJudgedFromTheLogAndRejectionsAreSplitByIt() throws Exception {
    PolicyResult p = replay(csvLog(), O, BreakerPolicy.defaults()).policies().get(0);
    RouteResult api = p.route("/api");
    // 30 s .. 50 s: two 10 s bins of all failures, one episode, opened on ~5 s after it began.
    assertThat(api.episodes).isEqualTo(1);
    assertThat(api.detected).isEqualTo(1);
    assertThat(api.troubleRequests).isEqualTo(1000);
    assertThat(api.timeToOpenMaxNanos / 1e9).isBetween(4.0, 6.0);
    assertThat(api.falseOpens).isZero();
    // From ~35 s to 50 s it rejects during trouble; after 50 s, while healthy again, it still
    // rejects (open, probing, ramping): the price of the policy, counted apart.
    assertThat(api.rejectedInTrouble).isBetween(700L, 750L);
    assertThat(api.rejectedHealthy).isPositive();
    assertThat(api.rejectedInTrouble + api.rejectedHealthy).isEqualTo(api.wouldReject);
    assertThat(p.route("/static").episodes).isZero();
  }

  @Test
  void parapetJsonLinesWrittenAtTheEndGiveTheSameAnswerAsCsvStarts() throws Exception {
    // Parapet writes its line when the request ends: time = start + latency.
    StringBuilder json = new StringBuilder();
    for (String line : csvLog().split("\n")) {
      if (line.startsWith("time")) {
        continue;
      }
      String[] f = line.split(",");
      Instant end =
          Instant.ofEpochSecond(0, Math.round(Double.parseDouble(f[0]) * 1e9))
              .plusMillis(Long.parseLong(f[3]));
      json.append(
          String.format(
              Locale.ROOT,
              "{\"time\":\"%s\",\"route\":\"%s\",\"method\":\"GET\",\"target\":\"/x?a=\\\"b\\\"\","
                  + "\"status\":%s,\"latency_ms\":%s.000,\"attempts\":1}%n",
              end,
              f[1],
              f[2],
              f[3]));
    }
    ReplayResult a = replay(csvLog(), O, BreakerPolicy.defaults());
    ReplayResult b = replay(json.toString(), O, BreakerPolicy.defaults());
    assertThat(b.lines()).isEqualTo(8000); // no header
    assertThat(verdicts(b)).isEqualTo(verdicts(a));
  }

  @Test
  void severalPoliciesInOneReadGiveWhatEachGivesAlone() throws Exception {
    BreakerPolicy strict = BreakerPolicy.defaults().toBuilder().failureRate(0.2).build();
    ReplayResult both = replay(csvLog(), O, BreakerPolicy.defaults(), strict);
    ReplayResult loose = replay(csvLog(), O, BreakerPolicy.defaults());
    ReplayResult tight = replay(csvLog(), O, strict);
    assertThat(both.policies().get(1).firstOpenNanos())
        .isLessThan(both.policies().get(0).firstOpenNanos());
    assertThat(both.policies().get(0).route("/api").transitions)
        .isEqualTo(loose.policies().get(0).route("/api").transitions);
    assertThat(both.policies().get(1).route("/api").transitions)
        .isEqualTo(tight.policies().get(0).route("/api").transitions);
    // Threads change nothing: each policy has its own seeded jitter.
    ReplayResult threaded = replay(csvLog(), O.withThreads(2), BreakerPolicy.defaults(), strict);
    assertThat(ReplayReport.text(threaded, O)).isEqualTo(ReplayReport.text(both, O));
    assertThat(ReplayReport.text(both, O))
        .contains("first open", "would reject while healthy", "time to open after trouble began");
  }

  @Test
  void aBadLineStopsTheReplayWithItsFileAndLineUnlessAllowed() throws Exception {
    String log = "time,route,status,latency_ms\n1,/a,200,5\n2,/a,abc,5\nx,/a,200,5\n3,/a,200,5\n";
    assertThatThrownBy(() -> replay(log, O, BreakerPolicy.defaults()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("access.log:3: status : abc (expected: digits)");
    ReplayResult r = replay(log, O.withMaxBadLines(2), BreakerPolicy.defaults());
    assertThat(r.badLines()).isEqualTo(2);
    assertThat(r.records()).isEqualTo(2);
    assertThat(r.badExamples())
        .containsExactly(
            "access.log:3: status : abc (expected: digits)",
            "access.log:4: time : x (expected: epoch seconds or an ISO-8601 instant)");
    assertThatThrownBy(() -> replay(log, O.withMaxBadLines(1), BreakerPolicy.defaults()))
        .hasMessageContaining("access.log:4:")
        .hasMessageContaining("more than --max-bad-lines 1");
    assertThatThrownBy(() -> replay("when,route\n1,/a\n", O, BreakerPolicy.defaults()))
        .hasMessageContaining("access.log:1: header : when,route")
        .hasMessageContaining("expected: columns time,route,status,latency_ms");
  }

  @Test
  void aRecordOlderThanTheWindowIsCountedNotReordered() throws Exception {
    String log =
        "time,route,status,latency_ms\n"
            + "100.0,/a,200,5\n"
            + "103.0,/a,200,5\n" // 3 s early: within the 5 s window, put in order
            + "102.0,/a,200,5\n"
            + "110.0,/a,200,5\n"
            + "104.0,/a,200,5\n"; // 6 s older than the newest: late
    ReplayResult r = replay(log, O, BreakerPolicy.defaults());
    assertThat(r.records()).isEqualTo(5);
    assertThat(r.late()).isEqualTo(1);
    assertThat(r.firstLate()).isEqualTo("access.log:6");
    assertThat(r.policies().get(0).route("/a").requests).isEqualTo(4);
    assertThat(ReplayReport.text(r, O)).contains("1 late (older than the 5 s window");
  }

  @Test
  void fromAndToCutTheRangeByStartTime() throws Exception {
    ReplayOptions cut = O.withRange(Instant.ofEpochSecond(T0 + 30), Instant.ofEpochSecond(T0 + 40));
    ReplayResult r = replay(csvLog(), cut, BreakerPolicy.defaults());
    assertThat(r.policies().get(0).route("/api").requests).isEqualTo(500);
    assertThat(r.outOfRange()).isPositive();
    assertThat(r.firstStartEpochNanos()).isEqualTo((T0 + 30) * 1_000_000_000L);
  }

  @Test
  void filesAreReadInTheOrderOfTheirFirstRecord() throws Exception {
    String[] lines = csvLog().split("\n");
    StringBuilder first = new StringBuilder(lines[0]).append('\n');
    StringBuilder second = new StringBuilder(lines[0]).append('\n');
    for (int i = 1; i < lines.length; i++) {
      (i <= lines.length / 2 ? first : second).append(lines[i]).append('\n');
    }
    ReplayResult whole = replay(csvLog(), O, BreakerPolicy.defaults());
    ReplayResult split =
        replay(
            List.of(source("b.csv", second.toString()), source("a.csv", first.toString())),
            O,
            BreakerPolicy.defaults());
    assertThat(split.late()).isZero();
    assertThat(split.lines()).isEqualTo(8002); // a header each
    assertThat(verdicts(split)).isEqualTo(verdicts(whole));
  }

  @Test
  void binsCoarsenSoADayHasAtMostMaxBinsPoints() {
    Bins b = new Bins();
    for (long s = 0; s < 86_400; s++) {
      b.add(s * 1_000_000_000L, 2);
    }
    assertThat(b.binNanos()).isEqualTo(64_000_000_000L);
    long[] v = b.values(b.binNanos(), (int) (86_399 / 64) + 1);
    assertThat(v).hasSizeLessThanOrEqualTo(Bins.MAX_BINS);
    assertThat(v[0]).isEqualTo(128);
    assertThat(java.util.Arrays.stream(v).sum()).isEqualTo(2 * 86_400);
    assertThat(b.capacity()).isLessThanOrEqualTo(Bins.MAX_BINS);
  }

  @Test
  void retainedMemoryDependsOnTheRateNotOnTheLengthOfTheLog() throws Exception {
    // 1,000 rps over 20 routes, each line up to 2 s from its place: the window holds about
    // rate x (window + jitter) records, the in-flight heap rate x latency, whatever the length.
    ReplayResult shortRun =
        replay(List.of(ReplayLogs.generated(100_000, 1000, 20, 2000)), O, BreakerPolicy.defaults());
    ReplayResult longRun =
        replay(
            List.of(ReplayLogs.generated(2_000_000, 1000, 20, 2000)), O, BreakerPolicy.defaults());
    assertThat(longRun.records()).isEqualTo(2_000_000);
    assertThat(longRun.late()).isZero();
    assertThat(longRun.maxWindowRecords()).isLessThanOrEqualTo(1000 * (5 + 2 + 1));
    assertThat(longRun.windowCapacity()).isEqualTo(shortRun.windowCapacity());
    assertThat(longRun.inFlightCapacity()).isEqualTo(shortRun.inFlightCapacity());
    assertThat(longRun.maxInFlight()).isLessThan(100);
    for (RouteResult r : longRun.policies().get(0).routes()) {
      assertThat(r.rejects.capacity()).isLessThanOrEqualTo(Bins.MAX_BINS);
      assertThat(r.states.size()).isLessThanOrEqualTo(RouteResult.MAX_STATE_CHANGES);
    }
    // The failing minute of /r0 (every ten minutes) is seen each time: 2,000 s, three episodes.
    assertThat(longRun.policies().get(0).route("/r0").episodes).isEqualTo(3);
  }

  /** The report after what was read: the policies' verdicts. */
  private static String verdicts(ReplayResult r) {
    String text = ReplayReport.text(r, O);
    return text.substring(text.indexOf("\ntrouble:"));
  }

  @Test
  void optionsAreCheckedWithTheirName() {
    assertThatThrownBy(() -> O.withSlow(Duration.ZERO)).hasMessage("--slow : PT0S (expected: > 0)");
    assertThatThrownBy(() -> O.withTrouble(1.5, Duration.ofSeconds(10), 10))
        .hasMessage("--trouble-rate : 1.5 (expected: in (0, 1])");
  }
}
