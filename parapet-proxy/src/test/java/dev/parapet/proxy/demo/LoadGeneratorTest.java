package dev.parapet.proxy.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.faultorigin.Behaviour;
import dev.parapet.proxy.faultorigin.FaultOrigin;
import dev.parapet.proxy.faultorigin.FaultOriginSettings;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.faultorigin.Latency;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The generator is open loop: a slow server does not slow the arrivals, and the time a request
 * waits for a connection counts in its latency. Assertions are lower bounds and counts, which a
 * loaded machine can only make larger, never break.
 */
class LoadGeneratorTest {

  private static FaultOrigin origin(String latency, double hangRate) {
    return FaultOrigin.start(
        FaultOriginSettings.loopback(),
        FaultPlan.of(
            Behaviour.builder()
                .latency(Latency.parse("latency", latency))
                .hangRate(hangRate)
                .build()));
  }

  @Test
  void aStaleAnswerIsAStoredCopyPastItsFreshnessNotAForwardForAStaleOne() {
    assertThat(LoadGenerator.isStaleAnswer("demo-edge; hit; ttl=-8; detail=\"stale breaker-open\""))
        .isTrue();
    assertThat(
            LoadGenerator.isStaleAnswer(
                "demo-edge; fwd=stale; ttl=-1; detail=\"stale slow-origin\""))
        .isTrue();
    assertThat(
            LoadGenerator.isStaleAnswer(
                "demo-shield; hit; ttl=-1; detail=stale-while-revalidate,"
                    + " demo-edge; fwd=stale; fwd-status=200; stored"))
        .as("the next tier's stale copy, stored on the way")
        .isTrue();
    // The edge's copy was stale, so it asked the origin: the answer is the origin's, fresh.
    assertThat(LoadGenerator.isStaleAnswer("demo-edge; fwd=stale; fwd-status=200; stored"))
        .isFalse();
    assertThat(LoadGenerator.isStaleAnswer("demo-edge; fwd=stale; fwd-status=304; ttl=1"))
        .isFalse();
    assertThat(LoadGenerator.isStaleAnswer("demo-edge; hit; ttl=0")).isFalse();
    assertThat(LoadGenerator.isStaleAnswer("edge; fwd=miss; detail=\"x; ttl=-1\"")).isFalse();
    assertThat(LoadGenerator.isStaleAnswer(null)).isFalse();
  }

  @Test
  void onlyARefusalBeforeAnyAttemptIsAFastFail() {
    assertThat(
            LoadGenerator.isFastFail(
                "edge; error=destination_unavailable; details=\"breaker open\""))
        .isTrue();
    assertThat(
            LoadGenerator.isFastFail(
                "shield; error=destination_unavailable; details=\"breaker open\", edge;"
                    + " error=http_response_status"))
        .isTrue();
    assertThat(
            LoadGenerator.isFastFail(
                "edge; error=destination_unavailable; details=\"breaker open; the retry was"
                    + " refused after a failed attempt\""))
        .isFalse();
    assertThat(LoadGenerator.isFastFail("edge; error=http_response_timeout")).isFalse();
    assertThat(LoadGenerator.isFastFail(null)).isFalse();
  }

  @Test
  void waitingForAConnectionCountsFromTheDueTime() throws Exception {
    try (FaultOrigin o = origin("fixed:50ms", 0);
        LoadGenerator load = new LoadGenerator(o.address(), 1, TimeUnit.SECONDS.toNanos(30))) {
      // 25 requests due 20 ms apart through one connection that takes 50 ms per answer.
      LoadGenerator.Recording r =
          load.start(50, TimeUnit.MILLISECONDS.toNanos(500)).done().get(60, TimeUnit.SECONDS);

      assertThat(r.count()).isEqualTo(25);
      for (int i = 0; i < r.count(); i++) {
        assertThat(r.status()[i]).isEqualTo(200);
        // Answer i cannot come before (i + 1) * 50 ms; it was due at i * 20 ms.
        long floor = TimeUnit.MILLISECONDS.toNanos((i + 1) * 50L - i * 20L);
        assertThat(r.latencyNanos()[i]).as("request %d", i).isGreaterThanOrEqualTo(floor);
      }
    }
  }

  @Test
  void aSlowServerDoesNotSlowTheArrivals() throws Exception {
    try (FaultOrigin o = origin("fixed:400ms", 0);
        LoadGenerator load = new LoadGenerator(o.address(), 1000, TimeUnit.SECONDS.toNanos(30))) {
      LoadGenerator.Run run = load.start(100, TimeUnit.MILLISECONDS.toNanos(300));
      LoadGenerator.Recording r = run.done().get(60, TimeUnit.SECONDS);

      assertThat(r.count()).isEqualTo(30);
      assertThat(run.sent.get()).isEqualTo(30);
      assertThat(run.ok.get()).isEqualTo(30);
      // Connections opened on demand, so requests overlap: one connection at a time (a closed
      // loop) would answer the last request after 30 x 400 ms - 290 ms = 11.7 s from its due time.
      assertThat(r.latencyNanos()[r.count() - 1]).isLessThan(TimeUnit.SECONDS.toNanos(6));
      for (int i = 0; i < r.count(); i++) {
        assertThat(r.latencyNanos()[i]).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(400));
      }
    }
  }

  @Test
  void theClientGivesUpOnAHangingServer() throws Exception {
    try (FaultOrigin o = origin("none", 1.0);
        LoadGenerator load =
            new LoadGenerator(o.address(), 100, TimeUnit.MILLISECONDS.toNanos(200))) {
      LoadGenerator.Recording r =
          load.start(20, TimeUnit.MILLISECONDS.toNanos(200)).done().get(60, TimeUnit.SECONDS);

      assertThat(r.count()).isEqualTo(4);
      for (int i = 0; i < r.count(); i++) {
        assertThat(r.status()[i]).isEqualTo(LoadGenerator.CLIENT_TIMEOUT);
        assertThat(r.latencyNanos()[i]).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
      }
    }
  }
}
