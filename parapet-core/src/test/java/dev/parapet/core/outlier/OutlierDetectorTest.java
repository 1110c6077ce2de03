package dev.parapet.core.outlier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.outlier.OutlierEvent.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every rule, run from an ordinary start time and from just below the wrap-around. */
class OutlierDetectorTest {
  private static final long SECOND = 1_000_000_000L;

  private final List<OutlierEvent> events = new ArrayList<>();

  private OutlierDetector detector(int hosts, OutlierConfig config, long start) {
    return new OutlierDetector(hosts, config, events::add, start);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void fiveConsecutive5xxEjectAtTheFifth(long start) {
    OutlierDetector d = detector(4, OutlierConfig.defaults(), start);
    for (int i = 0; i < 4; i++) {
      d.recordStatus(1, 500, start);
    }
    assertThat(d.isEjected(1)).isFalse();
    d.recordStatus(1, 503, start);
    assertThat(d.isEjected(1)).isTrue();
    assertThat(d.ejectedHosts()).isEqualTo(1);
    assertThat(events)
        .singleElement()
        .satisfies(e -> {
          assertThat(e.kind()).isEqualTo(Kind.EJECTED);
          assertThat(e.reason()).isEqualTo(EjectionReason.CONSECUTIVE_5XX);
          assertThat(e.host()).isEqualTo(1);
          assertThat(e.durationNanos()).isEqualTo(30 * SECOND);
        });
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void aNon5xxResponseResetsTheRun(long start) {
    OutlierDetector d = detector(4, OutlierConfig.defaults(), start);
    for (int round = 0; round < 10; round++) {
      for (int i = 0; i < 4; i++) {
        d.recordStatus(0, 502, start);
      }
      d.recordStatus(0, 404, start); // a prompt 404 is a healthy origin
    }
    assertThat(d.isEjected(0)).isFalse();
    assertThat(events).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void connectFailuresCountAs5xx(long start) {
    OutlierDetector d = detector(2, OutlierConfig.defaults(), start);
    for (int i = 0; i < 5; i++) {
      d.recordConnectFailure(0, start);
    }
    assertThat(d.isEjected(0)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void gatewayFailuresEjectAndA500ResetsOnlyTheGatewayRun(long start) {
    OutlierConfig config =
        OutlierConfig.defaults().withConsecutive5xx(0).withConsecutiveGatewayFailures(3);
    OutlierDetector d = detector(4, config, start);
    d.recordStatus(0, 502, start);
    d.recordStatus(0, 504, start);
    d.recordStatus(0, 500, start); // not a gateway error: restarts the gateway run
    d.recordStatus(0, 503, start);
    d.recordConnectFailure(0, start);
    assertThat(d.isEjected(0)).isFalse();
    d.recordStatus(0, 502, start);
    assertThat(d.isEjected(0)).isTrue();
    assertThat(events.get(0).reason()).isEqualTo(EjectionReason.CONSECUTIVE_GATEWAY_FAILURE);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void failurePercentageIsJudgedAtTheIntervalEndWithMinimumVolume(long start) {
    OutlierConfig config = OutlierConfig.defaults().withConsecutive5xx(0);
    OutlierDetector d = detector(4, config, start);
    for (int i = 0; i < 200; i++) {
      d.recordStatus(0, i % 2 == 0 ? 500 : 200, start); // 200 requests, 50 % failed
      if (i < 199) {
        d.recordStatus(1, i % 2 == 0 ? 500 : 200, start); // 199 requests: below volume
      }
      d.recordStatus(2, i % 5 == 0 ? 500 : 200, start); // 20 %: healthy
    }
    d.advance(start + 10 * SECOND - 1);
    assertThat(d.isEjected(0)).isFalse(); // not before the interval ends
    d.advance(start + 10 * SECOND);
    assertThat(d.isEjected(0)).isTrue();
    assertThat(d.isEjected(1)).isFalse();
    assertThat(d.isEjected(2)).isFalse();
    assertThat(events.get(0).reason()).isEqualTo(EjectionReason.FAILURE_PERCENTAGE);
    // The next interval starts from zero: host 1's 199 requests do not carry over.
    d.recordStatus(1, 500, start + 11 * SECOND);
    d.advance(start + 20 * SECOND);
    assertThat(d.isEjected(1)).isFalse();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void ejectionTimeGrowsWithEachEjectionUpToTheCapAndHostsReturnWhenTimeIsUp(long start) {
    OutlierDetector d = detector(2, OutlierConfig.defaults(), start);
    long now = start;
    long[] expected = {30, 60, 90, 120, 150, 180, 210, 240, 270, 300, 300, 300};
    for (long seconds : expected) {
      eject(d, 0, now);
      assertThat(d.isEjected(0)).isTrue();
      assertThat(events.get(events.size() - 1).durationNanos()).isEqualTo(seconds * SECOND);
      assertThat(d.remainingEjectionNanos(0, now + SECOND)).isEqualTo((seconds - 1) * SECOND);
      d.advance(now + seconds * SECOND - 1);
      assertThat(d.isEjected(0)).as("ejected for %ds", seconds).isTrue();
      now += seconds * SECOND;
      d.advance(now);
      assertThat(d.isEjected(0)).isFalse();
      assertThat(d.remainingEjectionNanos(0, now)).isZero();
      assertThat(d.hasReturned(0)).isTrue();
      assertThat(d.returnedAtNanos(0)).isEqualTo(now);
      assertThat(events.get(events.size() - 1).kind()).isEqualTo(Kind.RETURNED);
    }
    assertThat(d.ejectionMultiplier(0)).isEqualTo(10);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void theMultiplierDecaysOncePerHealthyInterval(long start) {
    OutlierDetector d = detector(2, OutlierConfig.defaults(), start);
    eject(d, 0, start);
    d.advance(start + 30 * SECOND); // returns; interval ends at 10 s boundaries from start
    eject(d, 0, start + 30 * SECOND);
    assertThat(d.ejectionMultiplier(0)).isEqualTo(2);
    long now = start + 90 * SECOND;
    d.advance(now); // returns after 60 s; this interval end does not decay (Envoy order)
    assertThat(d.ejectionMultiplier(0)).isEqualTo(2);
    d.advance(now + 10 * SECOND);
    assertThat(d.ejectionMultiplier(0)).isEqualTo(1);
    d.advance(now + 20 * SECOND);
    assertThat(d.ejectionMultiplier(0)).isZero();
    eject(d, 0, now + 20 * SECOND);
    assertThat(events.get(events.size() - 1).durationNanos()).isEqualTo(30 * SECOND);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void neverEjectsBeyondTheMaximumFraction(long start) {
    OutlierDetector d = detector(5, OutlierConfig.defaults(), start); // 50 % of 5 = 2 hosts
    assertThat(d.maxEjectedHosts()).isEqualTo(2);
    eject(d, 0, start);
    eject(d, 1, start);
    eject(d, 2, start);
    assertThat(d.isEjected(2)).isFalse();
    assertThat(d.ejectedHosts()).isEqualTo(2);
    assertThat(events.get(2).kind()).isEqualTo(Kind.EJECTION_SKIPPED);
    assertThat(events.get(2).host()).isEqualTo(2);
    // A refused run restarts: the next five failures try again, and succeed once room is made.
    d.advance(start + 30 * SECOND);
    eject(d, 2, start + 30 * SECOND);
    assertThat(d.isEjected(2)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void aSingleHostPoolIsNeverEjected(long start) {
    OutlierDetector d = detector(1, OutlierConfig.defaults(), start);
    eject(d, 0, start);
    assertThat(d.isEjected(0)).isFalse();
    assertThat(events).extracting(OutlierEvent::kind).containsExactly(Kind.EJECTION_SKIPPED);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void generationChangesOnEveryEjectionAndReturn(long start) {
    OutlierDetector d = detector(4, OutlierConfig.defaults(), start);
    long g0 = d.generation();
    eject(d, 3, start);
    long g1 = d.generation();
    d.advance(start + 30 * SECOND);
    assertThat(g1).isNotEqualTo(g0);
    assertThat(d.generation()).isNotEqualTo(g1);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5 * SECOND})
  void aThrowingListenerDoesNotStopEjection(long start) {
    OutlierDetector d =
        new OutlierDetector(
            4,
            OutlierConfig.defaults(),
            e -> {
              throw new IllegalStateException("boom");
            },
            start);
    eject(d, 0, start);
    assertThat(d.isEjected(0)).isTrue();
    assertThat(d.listenerFailures()).isEqualTo(1);
  }

  @org.junit.jupiter.api.Test
  void configErrorsSayWhatExpectedAndFound() {
    assertThatThrownBy(() -> OutlierConfig.defaults().withFailurePercentage(1.5, 200))
        .hasMessage("failure_percentage : 1.5 (expected: in (0, 1])");
    assertThatThrownBy(() -> OutlierConfig.defaults().withMaxEjectedFraction(-0.1))
        .hasMessage("max_ejected : -0.1 (expected: in [0, 1])");
    assertThatThrownBy(() ->
            OutlierConfig.defaults().withEjection(Duration.ofSeconds(30), Duration.ofSeconds(1)))
        .hasMessageStartingWith("max_ejection : 1000000000ns (expected: >= base_ejection");
    assertThatThrownBy(() -> OutlierConfig.defaults().withConsecutive5xx(-1))
        .hasMessage("consecutive_5xx : -1 (expected: >= 0)");
  }

  private static void eject(OutlierDetector d, int host, long now) {
    for (int i = 0; i < 5; i++) {
      d.recordStatus(host, 503, now);
    }
  }
}
