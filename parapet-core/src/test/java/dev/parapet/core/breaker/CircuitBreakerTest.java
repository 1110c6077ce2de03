package dev.parapet.core.breaker;

import static dev.parapet.core.breaker.Harness.MS;
import static dev.parapet.core.breaker.Harness.S;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.RandomSource;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CircuitBreakerTest {

  /** Every rule below holds for both window kinds and for start times around the wrap. */
  static Stream<Arguments> worlds() {
    List<Arguments> worlds = new ArrayList<>();
    for (BreakerPolicy.Builder window :
        List.of(Harness.noJitter(), Harness.noJitter().countWindow(200))) {
      for (long start : new long[] {0L, Long.MAX_VALUE - 45 * S, Long.MIN_VALUE + 5 * MS}) {
        BreakerPolicy p = window.build();
        worlds.add(Arguments.of(p.windowKind() + "@" + start, p, start));
      }
    }
    return worlds.stream();
  }

  // ------------------------------------------------------------------------------------------
  // Opening

  @ParameterizedTest(name = "{0}")
  @MethodSource("worlds")
  void needsTwoHundredCallsBeforeRatesCount(String name, BreakerPolicy policy, long start) {
    Harness h = new Harness(policy, start, 1);
    assertThat(h.calls(199, Outcome.FAILURE_STATUS)).isEqualTo(199);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    h.call(Outcome.TIMEOUT);
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    TransitionEvent e = h.last();
    assertThat(e.reason()).isEqualTo(Reason.FAILURE_RATE);
    assertThat(e.observations()).isEqualTo(200);
    assertThat(e.failureRate()).isEqualTo(1.0);
    assertThat(e.requestId()).isEqualTo(200);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("worlds")
  void opensAtFiftyPercentWeightedFailures(String name, BreakerPolicy policy, long start) {
    Harness h = new Harness(policy, start, 1);
    h.calls(101, Outcome.SUCCESS);
    h.calls(99, Outcome.FAILURE_STATUS); // 99 / 200 = 49.5 %
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    int more = 0;
    while (h.breaker.state() == State.CLOSED) {
      h.call(Outcome.FAILURE_STATUS);
      more++;
    }
    assertThat(more).isLessThanOrEqualTo(2); // count window: 1 (oldest success leaves); time: 2
    TransitionEvent e = h.last();
    assertThat(e.reason()).isEqualTo(Reason.FAILURE_RATE);
    assertThat(e.failureRate()).isGreaterThanOrEqualTo(0.5);
    assertThat(e.scope()).isEqualTo(Scope.ROUTE);
    assertThat(e.key()).isEqualTo(Harness.KEY);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("worlds")
  void slowCallsWeighHalfAFailure(String name, BreakerPolicy policy, long start) {
    Harness h = new Harness(policy, start, 1);
    // 69 failures + 0.5 x 60 slow = 99 of 200; slow rate 30 %: stays closed
    h.calls(71, Outcome.SUCCESS);
    h.calls(60, Outcome.SLOW);
    h.calls(69, Outcome.FAILURE_STATUS);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    Harness h2 = new Harness(policy, start, 1);
    h2.calls(70, Outcome.SUCCESS);
    h2.calls(60, Outcome.SLOW);
    h2.calls(70, Outcome.FAILURE_STATUS); // 70 + 30 = 100 of 200 = 50 %
    assertThat(h2.breaker.state()).isEqualTo(State.OPEN);
    assertThat(h2.last().reason()).isEqualTo(Reason.FAILURE_RATE);
    assertThat(h2.last().failureRate()).isCloseTo(0.5, within(1e-9));
    assertThat(h2.last().slowRate()).isCloseTo(0.3, within(1e-9));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("worlds")
  void opensAtThirtyFivePercentSlowCalls(String name, BreakerPolicy policy, long start) {
    Harness h = new Harness(policy, start, 1);
    h.calls(131, Outcome.SUCCESS);
    h.calls(69, Outcome.SLOW); // 34.5 %
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    Harness h2 = new Harness(policy, start, 1);
    h2.calls(130, Outcome.SUCCESS);
    h2.calls(70, Outcome.SLOW); // 35 %
    assertThat(h2.breaker.state()).isEqualTo(State.OPEN);
    assertThat(h2.last().reason()).isEqualTo(Reason.SLOW_RATE);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("worlds")
  void threeConnectFailuresWithinTenSecondsTripWithoutVolume(
      String name, BreakerPolicy policy, long start) {
    Harness h = new Harness(policy, start, 1);
    h.call(Outcome.CONNECT_FAILURE);
    h.advanceMillis(6_000);
    h.call(Outcome.CONNECT_FAILURE);
    h.advanceMillis(4_001); // first one is now older than 10 s
    h.call(Outcome.CONNECT_FAILURE);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    h.advanceMillis(1_000);
    h.call(Outcome.CONNECT_FAILURE); // three within 5 s
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    assertThat(h.last().reason()).isEqualTo(Reason.CONNECT_FAILURES);
    // the time window has already forgotten the first failure (11 s old); the count window not
    assertThat(h.last().observations())
        .isEqualTo(policy.windowKind() == BreakerPolicy.WindowKind.TIME ? 3 : 4);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("worlds")
  void ignoredOutcomesAreNotEvidence(String name, BreakerPolicy policy, long start) {
    Harness h = new Harness(policy, start, 1);
    h.calls(500, Outcome.LOCAL_REJECTION);
    h.calls(500, Outcome.CLIENT_CANCELLED);
    h.calls(500, Outcome.HEDGE_LOST);
    h.calls(150, Outcome.FAILURE_STATUS);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    assertThat(h.breaker.snapshot(h.now()).calls()).isEqualTo(150);
  }

  @Test
  void oldEvidenceAgesOut() {
    Harness h = new Harness(Harness.noJitter().build());
    h.calls(150, Outcome.FAILURE_STATUS);
    h.advanceMillis(10_000);
    h.calls(150, Outcome.FAILURE_STATUS);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    h.calls(50, Outcome.FAILURE_STATUS);
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
  }

  // ------------------------------------------------------------------------------------------
  // Open, backoff and jitter

  @ParameterizedTest(name = "{0}")
  @MethodSource("worlds")
  void failsFastForThirtySecondsThenProbes(String name, BreakerPolicy policy, long start) {
    Harness h = new Harness(policy, start, 1);
    h.tripWithConnectFailures();
    assertThat(h.last().openNanos()).isEqualTo(30 * S);
    assertThat(h.breaker.retryAfterNanos(h.now())).isEqualTo(30 * S);
    h.advanceMillis(29_999);
    assertThat(h.calls(100, Outcome.SUCCESS)).isZero();
    assertThat(h.breaker.rejectedCount()).isEqualTo(100);
    assertThat(h.breaker.retryAfterNanos(h.now())).isEqualTo(MS);
    h.advanceMillis(1);
    Permit p = new Permit();
    assertThat(h.acquire(p)).isEqualTo(Decision.PROBE);
    assertThat(p.isProbe()).isTrue();
    assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
    assertThat(h.last().reason()).isEqualTo(Reason.BACKOFF_ELAPSED);
  }

  @Test
  void backoffDoublesOnEachReopenUpToFiveMinutes() {
    Harness h = new Harness(Harness.noJitter().build());
    h.tripWithConnectFailures();
    List<Long> opens = new ArrayList<>();
    opens.add(h.last().openNanos() / S);
    for (int i = 0; i < 6; i++) {
      h.ticker.advance(h.breaker.retryAfterNanos(h.now()));
      assertThat(h.call(Outcome.TIMEOUT)).isEqualTo(Decision.PROBE);
      assertThat(h.last().reason()).isEqualTo(Reason.PROBE_FAILED);
      opens.add(h.last().openNanos() / S);
    }
    assertThat(opens).containsExactly(30L, 60L, 120L, 240L, 300L, 300L, 300L);
  }

  @Test
  void openTimeIsJitteredByTwentyPercent() {
    Set<Long> distinct = new HashSet<>();
    for (long seed = 0; seed < 200; seed++) {
      Harness h = new Harness(BreakerPolicy.defaults(), 0, seed);
      h.tripWithConnectFailures();
      long open = h.last().openNanos();
      assertThat(open).isBetween(24 * S, 36 * S);
      distinct.add(open / MS);
    }
    // 200 PoPs must not re-probe in the same second (seed 000): the open times spread out.
    assertThat(distinct).hasSizeGreaterThan(150);
    Harness h = new Harness(BreakerPolicy.defaults(), 0, 3);
    assertThat(h.breaker.openNanos(10)).isBetween(240 * S, 360 * S); // capped, then jittered
  }

  // ------------------------------------------------------------------------------------------
  // Half-open probes

  private static Harness halfOpen(BreakerPolicy policy) {
    Harness h = new Harness(policy);
    h.tripWithConnectFailures();
    h.advanceMillis(30_000);
    return h;
  }

  @Test
  void threeProbesOneInFlightSpacedHalfASecondTwoSucceedingMoveOn() {
    Harness h = halfOpen(Harness.noJitter().build());
    Permit first = new Permit();
    assertThat(h.acquire(first)).isEqualTo(Decision.PROBE);
    // one in flight: everyone else is rejected, even much later
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_HALF_OPEN);
    h.advanceMillis(900);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_HALF_OPEN);
    first.onOutcome(Outcome.SUCCESS, h.now());
    assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
    // spacing counts from the previous probe's start: 900 ms ago, so the next may go now
    Permit second = new Permit();
    assertThat(h.acquire(second)).isEqualTo(Decision.PROBE);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_HALF_OPEN);
    second.onOutcome(Outcome.SUCCESS, h.now() + 200 * MS);
    assertThat(h.breaker.state()).isEqualTo(State.RAMPING);
    TransitionEvent e = h.last();
    assertThat(e.from()).isEqualTo(State.HALF_OPEN);
    assertThat(e.reason()).isEqualTo(Reason.PROBES_PASSED);
    assertThat(e.probes()).isEqualTo(2);
    assertThat(h.breaker.probesSentCount()).isEqualTo(2);
  }

  @Test
  void probesAreSpacedAtLeastHalfASecond() {
    Harness h = halfOpen(Harness.noJitter().build());
    assertThat(h.call(Outcome.SLOW)).isEqualTo(Decision.PROBE); // fast enough: counts as ok
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_HALF_OPEN);
    h.advanceMillis(499);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_HALF_OPEN);
    assertThat(h.breaker.nanosUntilProbe(h.now())).isEqualTo(MS);
    assertThat(h.breaker.retryAfterNanos(h.now())).isEqualTo(MS);
    h.advanceMillis(1);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.PROBE);
    assertThat(h.breaker.state()).isEqualTo(State.RAMPING);
  }

  @Test
  void anyFailingProbeReopensAtOnceWithLongerBackoff() {
    Harness h = halfOpen(Harness.noJitter().build());
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.PROBE);
    h.advanceMillis(500);
    assertThat(h.call(Outcome.TIMEOUT)).isEqualTo(Decision.PROBE);
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    assertThat(h.last().reason()).isEqualTo(Reason.PROBE_FAILED);
    assertThat(h.last().probes()).isEqualTo(2);
    assertThat(h.last().openNanos()).isEqualTo(60 * S);
  }

  @Test
  void probesSlowerThanOneSecondDoNotCount() {
    Harness h = halfOpen(Harness.noJitter().build());
    Permit p = new Permit();
    assertThat(h.acquire(p)).isEqualTo(Decision.PROBE);
    h.advanceMillis(1_001);
    p.onOutcome(Outcome.SUCCESS, h.now());
    assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
    Permit p2 = new Permit();
    assertThat(h.acquire(p2)).isEqualTo(Decision.PROBE);
    h.advanceMillis(1_500);
    p2.onOutcome(Outcome.SLOW, h.now()); // two of three slow: two successes are out of reach
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    assertThat(h.last().reason()).isEqualTo(Reason.PROBES_TOO_SLOW);
  }

  @Test
  void twoOfThreeIsEnough() {
    Harness h = halfOpen(Harness.noJitter().build());
    Permit slow = new Permit();
    h.acquire(slow);
    h.advanceMillis(2_000);
    slow.onOutcome(Outcome.SUCCESS, h.now());
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.PROBE);
    assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
    h.advanceMillis(500);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.PROBE);
    assertThat(h.breaker.state()).isEqualTo(State.RAMPING);
    assertThat(h.last().probes()).isEqualTo(3);
  }

  @Test
  void aReleasedProbeIsGivenBack() {
    Harness h = halfOpen(Harness.noJitter().build());
    for (int i = 0; i < 5; i++) {
      Permit p = new Permit();
      assertThat(h.acquire(p)).isEqualTo(Decision.PROBE);
      p.release(h.now()); // admission shed it after the breaker let it through
      h.advanceMillis(500);
    }
    assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.PROBE);
    h.advanceMillis(500);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.PROBE);
    assertThat(h.breaker.state()).isEqualTo(State.RAMPING);
  }

  @Test
  void aLostProbeTimesOutAsAFailure() {
    Harness h = halfOpen(Harness.noJitter().build());
    Permit lost = new Permit();
    assertThat(h.acquire(lost)).isEqualTo(Decision.PROBE);
    h.advanceMillis(29_999);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_HALF_OPEN);
    h.advanceMillis(1);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_OPEN);
    assertThat(h.last().reason()).isEqualTo(Reason.PROBE_TIMED_OUT);
    assertThat(h.last().openNanos()).isEqualTo(60 * S);
    lost.onOutcome(Outcome.SUCCESS, h.now()); // too late: stale, changes nothing
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    assertThat(h.breaker.staleEvidenceCount()).isEqualTo(1);
  }

  // ------------------------------------------------------------------------------------------
  // Ramp

  private static Harness ramping(BreakerPolicy policy) {
    Harness h = halfOpen(policy);
    h.call(Outcome.SUCCESS);
    h.advanceMillis(500);
    h.call(Outcome.SUCCESS);
    assertThat(h.breaker.state()).isEqualTo(State.RAMPING);
    return h;
  }

  @Test
  void rampAdmitsFivePercentGrowingToAllOverThirtySeconds() {
    Harness h = ramping(Harness.noJitter().build());
    assertThat(h.calls(1_000, Outcome.SUCCESS)).isBetween(49, 51);
    h.advanceMillis(15_000); // 5 % + 95 % x 0.5 = 52.5 %
    assertThat(h.calls(1_000, Outcome.SUCCESS)).isBetween(524, 526);
    h.advanceMillis(14_999);
    assertThat(h.calls(1_000, Outcome.SUCCESS)).isBetween(995, 1_000);
    assertThat(h.breaker.state()).isEqualTo(State.RAMPING);
    h.advanceMillis(1);
    assertThat(h.calls(1_000, Outcome.SUCCESS)).isEqualTo(1_000);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    assertThat(h.last().reason()).isEqualTo(Reason.RAMP_COMPLETE);
    assertThat(h.path())
        .containsExactly(State.CLOSED, State.OPEN, State.HALF_OPEN, State.RAMPING, State.CLOSED);
  }

  @Test
  void aCompletedRampResetsTheBackoff() {
    Harness h = ramping(Harness.noJitter().build());
    h.advanceMillis(30_000);
    h.call(Outcome.SUCCESS);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    h.tripWithConnectFailures();
    assertThat(h.last().openNanos()).isEqualTo(30 * S);
  }

  @Test
  void aTripWhileRampingReopensWithLongerBackoff() {
    Harness h = ramping(Harness.noJitter().build());
    // the ramp watches a fresh window: the probes' evidence is not in it
    assertThat(h.breaker.snapshot(h.now()).calls()).isZero();
    h.advanceMillis(1_000);
    h.tripWithConnectFailures(); // the fast trip needs no volume
    // some of the three were beyond the admitted share: keep failing until it opens
    while (h.breaker.state() == State.RAMPING) {
      h.call(Outcome.CONNECT_FAILURE);
    }
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    assertThat(h.last().from()).isEqualTo(State.RAMPING);
    assertThat(h.last().openNanos()).isEqualTo(60 * S);
  }

  @Test
  void noRampClosesStraightAfterTheProbes() {
    Harness h = halfOpen(Harness.noJitter().ramp(0.05, Duration.ZERO).build());
    h.call(Outcome.SUCCESS);
    h.advanceMillis(500);
    h.call(Outcome.SUCCESS);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    assertThat(h.breaker.snapshot(h.now()).calls()).isZero();
  }

  // ------------------------------------------------------------------------------------------
  // Modes and operators

  @Test
  void shadowModeDecidesAndReportsButNeverRejects() {
    BreakerPolicy policy = Harness.noJitter().mode(Mode.SHADOW).build();
    Harness shadow = new Harness(policy);
    Harness enforce = new Harness(Harness.noJitter().build());
    for (Harness h : List.of(shadow, enforce)) {
      h.tripWithConnectFailures();
      h.advanceMillis(10_000);
    }
    Permit p = new Permit();
    assertThat(shadow.acquire(p)).isEqualTo(Decision.SHADOW_PERMITTED);
    assertThat(p.shadowedDecision()).isEqualTo(Decision.REJECTED_OPEN);
    p.onOutcome(Outcome.SUCCESS, shadow.now());
    assertThat(enforce.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_OPEN);
    assertThat(shadow.calls(99, Outcome.SUCCESS)).isEqualTo(99);
    assertThat(shadow.breaker.shadowRejectedCount()).isEqualTo(100);
    assertThat(shadow.breaker.rejectedCount()).isZero();
    // the same state machine, the same events
    for (Harness h : List.of(shadow, enforce)) {
      h.advanceMillis(20_000);
      assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.PROBE);
    }
    assertThat(shadow.path()).isEqualTo(enforce.path());
    assertThat(shadow.breaker.mode()).isEqualTo(Mode.SHADOW);
    shadow.breaker.mode(Mode.ENFORCE);
    assertThat(shadow.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_HALF_OPEN);
  }

  @Test
  void syntheticProbesKeepUsersAway() {
    Harness h = new Harness(Harness.noJitter().probeMode(ProbeMode.SYNTHETIC).build());
    h.tripWithConnectFailures();
    Permit probe = new Permit();
    assertThat(h.breaker.tryAcquireProbe(probe, h.now())).isEqualTo(Decision.REJECTED_OPEN);
    assertThat(h.breaker.nanosUntilProbe(h.now())).isEqualTo(30 * S);
    h.advanceMillis(30_000);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_OPEN);
    assertThat(h.breaker.tryAcquireProbe(probe, h.now())).isEqualTo(Decision.PROBE);
    assertThat(h.breaker.nanosUntilProbe(h.now())).isEqualTo(-1);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_HALF_OPEN);
    probe.onOutcome(Outcome.SUCCESS, h.now());
    h.advanceMillis(500);
    assertThat(h.breaker.tryAcquireProbe(probe, h.now())).isEqualTo(Decision.PROBE);
    probe.onOutcome(Outcome.SUCCESS, h.now());
    assertThat(h.breaker.state()).isEqualTo(State.RAMPING);
    assertThat(h.breaker.tryAcquireProbe(probe, h.now())).isEqualTo(Decision.NO_PROBE_DUE);
    assertThat(h.calls(100, Outcome.SUCCESS)).isBetween(4, 6);
  }

  @Test
  void failingHealthChecksOpenAClosedOrRampingBreakerOnly() {
    Harness h = new Harness(Harness.noJitter().build());
    assertThat(h.breaker.openOnHealthCheck(h.now())).isTrue();
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    assertThat(h.last().reason()).isEqualTo(Reason.HEALTH_CHECK_FAILED);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_OPEN);
    // Already open, or half-open (its probes decide): left alone.
    assertThat(h.breaker.openOnHealthCheck(h.now())).isFalse();
    h.advanceMillis(30_000);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.PROBE);
    assertThat(h.breaker.openOnHealthCheck(h.now())).isFalse();
    assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
    h.advanceMillis(500);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.PROBE);
    assertThat(h.breaker.state()).isEqualTo(State.RAMPING);
    // Ramping: opens again, with the longer backoff of a re-open.
    assertThat(h.breaker.openOnHealthCheck(h.now())).isTrue();
    assertThat(h.breaker.nanosUntilProbe(h.now())).isEqualTo(60 * S);
    h.breaker.forceOpen(h.now());
    assertThat(h.breaker.openOnHealthCheck(h.now())).isFalse();
    assertThat(h.breaker.state()).isEqualTo(State.FORCED_OPEN);
  }

  @Test
  void operatorsForceOpenCloseAndDisable() {
    Harness h = new Harness(Harness.noJitter().build());
    h.breaker.forceOpen(h.now());
    h.advanceMillis(3_600_000);
    assertThat(h.call(Outcome.SUCCESS)).isEqualTo(Decision.REJECTED_FORCED_OPEN);
    assertThat(h.last().reason()).isEqualTo(Reason.FORCED_OPEN);
    h.breaker.close(h.now());
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    assertThat(h.last().reason()).isEqualTo(Reason.FORCED_CLOSED);
    h.breaker.disable(h.now());
    assertThat(h.calls(1_000, Outcome.CONNECT_FAILURE)).isEqualTo(1_000);
    assertThat(h.breaker.state()).isEqualTo(State.DISABLED);
    h.breaker.close(h.now());
    assertThat(h.breaker.snapshot(h.now()).calls()).isZero();
    h.tripWithConnectFailures();
    h.breaker.reset(h.now());
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    assertThat(h.path())
        .containsExactly(
            State.CLOSED,
            State.FORCED_OPEN,
            State.CLOSED,
            State.DISABLED,
            State.CLOSED,
            State.OPEN,
            State.CLOSED);
  }

  @Test
  void flappingIsReportedOnceWhenOpensExceedFifteenAnHour() {
    BreakerPolicy policy =
        BreakerPolicy.builder()
            .open(Duration.ofSeconds(1), Duration.ofSeconds(1), 0.0)
            .halfOpen(1, Duration.ZERO, 1, Duration.ofSeconds(1))
            .build();
    Harness h = new Harness(policy);
    h.tripWithConnectFailures(); // open number 1
    for (int open = 2; open <= 20; open++) {
      h.advanceMillis(1_000);
      assertThat(h.call(Outcome.TIMEOUT)).isEqualTo(Decision.PROBE);
      assertThat(h.flapping).hasSize(open <= 15 ? 0 : 1);
    }
    FlappingEvent f = h.flapping.get(0);
    assertThat(f.opens()).isEqualTo(16);
    assertThat(f.spanNanos()).isEqualTo(3_600 * S);
    assertThat(h.breaker.isFlapping()).isTrue();
    h.breaker.reset(h.now());
    assertThat(h.breaker.isFlapping()).isFalse();
  }

  // ------------------------------------------------------------------------------------------
  // Permits

  @Test
  void aSecondCompletionIsACountedNoOp() {
    Harness h = new Harness(Harness.noJitter().build());
    Permit p = new Permit();
    h.acquire(p);
    assertThat(p.isActive()).isTrue();
    assertThat(p.onOutcome(Outcome.FAILURE_STATUS, h.now())).isTrue();
    assertThat(p.isActive()).isFalse();
    assertThat(p.onOutcome(Outcome.FAILURE_STATUS, h.now())).isFalse();
    assertThat(p.release(h.now())).isFalse();
    assertThat(h.breaker.misuseCount()).isEqualTo(2);
    assertThat(h.breaker.snapshot(h.now()).calls()).isEqualTo(1);
  }

  @Test
  void permitsAreReusedButNotWhileActive() {
    Harness h = new Harness(Harness.noJitter().build());
    Permit p = new Permit();
    for (int i = 0; i < 10; i++) {
      h.acquire(p);
      p.onOutcome(Outcome.SUCCESS, h.now());
    }
    assertThat(h.breaker.snapshot(h.now()).calls()).isEqualTo(10);
    h.acquire(p);
    assertThatThrownBy(() -> h.acquire(p))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("permit : active");
    assertThatThrownBy(() -> new Permit().onOutcome(Outcome.SUCCESS, 0))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("never admitted");
    assertThat(h.breaker.tryAcquire(h.now())).isNotNull();
  }

  /** A caller's object that is its own permit, as an attempt is. */
  private static final class OwnPermit extends AbstractPermit {
    OwnPermit(CircuitBreaker breaker, long requestId) {
      super(breaker);
      requestIdForEvents(requestId);
    }

    boolean end(Outcome outcome, long now) {
      return onOutcome(outcome, now);
    }
  }

  @Test
  void anObjectThatExtendsTheAbstractPermitIsItsOwnPermit() {
    Harness h = new Harness(Harness.noJitter().build());
    OwnPermit idle = new OwnPermit(h.breaker, 7);
    assertThat(idle.breaker()).isSameAs(h.breaker);
    assertThat(idle.isActive()).isFalse();
    assertThatThrownBy(() -> idle.end(Outcome.SUCCESS, h.now()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("never admitted");
    h.calls(199, Outcome.FAILURE_STATUS);
    OwnPermit last = new OwnPermit(h.breaker, 4242);
    assertThat(h.breaker.tryAcquire(last, h.now())).isEqualTo(Decision.PERMITTED);
    assertThat(last.isActive()).isTrue();
    assertThat(last.startNanos()).isEqualTo(h.now());
    assertThat(last.end(Outcome.TIMEOUT, h.now())).isTrue();
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    assertThat(h.last().requestId()).isEqualTo(4242);
    assertThat(last.end(Outcome.TIMEOUT, h.now())).isFalse();
    assertThat(h.breaker.misuseCount()).isEqualTo(1);

    h.advanceMillis(60_000);
    OwnPermit probe = new OwnPermit(h.breaker, 1);
    assertThat(h.breaker.tryAcquire(probe, h.now())).isEqualTo(Decision.PROBE);
    assertThat(probe.isProbe()).isTrue();
    assertThat(probe.shadowedDecision()).isEqualTo(Decision.PERMITTED);
    assertThat(probe.end(Outcome.SUCCESS, h.now())).isTrue();
    assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
  }

  @Test
  void evidenceFromBeforeAnOpeningIsDropped() {
    Harness h = new Harness(Harness.noJitter().build());
    Permit slowCall = new Permit();
    h.acquire(slowCall);
    h.tripWithConnectFailures();
    h.advanceMillis(30_000);
    h.call(Outcome.SUCCESS);
    h.advanceMillis(500);
    h.call(Outcome.SUCCESS);
    assertThat(h.breaker.state()).isEqualTo(State.RAMPING);
    slowCall.onOutcome(Outcome.TIMEOUT, h.now());
    assertThat(h.breaker.snapshot(h.now()).calls()).isZero();
    assertThat(h.breaker.staleEvidenceCount()).isEqualTo(1);
  }

  @Test
  void theClosedPathAllocatesNothing() {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    Harness h = new Harness(BreakerPolicy.defaults());
    Permit p = new Permit();
    long t = 0;
    for (int i = 0; i < 200_000; i++) { // warm up, and rotate through all buckets
      t += 1_000;
      h.breaker.tryAcquire(p, t);
      p.onOutcome(Outcome.SUCCESS, t);
    }
    int calls = 100_000;
    long before = mx.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < calls; i++) {
      t += 1_000; // 1 us apart: 100 ms buckets keep rotating
      h.breaker.tryAcquire(p, t);
      p.onOutcome(Outcome.SUCCESS, t);
    }
    long allocated = mx.getCurrentThreadAllocatedBytes() - before;
    // One small head object per 100 ms bucket rotation is allowed; a per-call object is not.
    assertThat(allocated).as("bytes for %d calls", calls).isLessThan(calls / 4);
  }

  // ------------------------------------------------------------------------------------------
  // Events, listener, reading

  @Test
  void everyTransitionCarriesItsEvidence() {
    Harness h = new Harness(Harness.noJitter().build());
    h.calls(100, Outcome.SUCCESS);
    h.calls(40, Outcome.SLOW);
    h.advanceMillis(123);
    h.calls(99, Outcome.FAILURE_STATUS); // (99 + 20) / 239 < 50 %
    assertThat(h.events).isEmpty();
    h.call(Outcome.FAILURE_STATUS); // (100 + 20) / 240 = 50 %
    TransitionEvent e = h.last();
    assertThat(e.key()).isEqualTo(Harness.KEY);
    assertThat(e.from()).isEqualTo(State.CLOSED);
    assertThat(e.to()).isEqualTo(State.OPEN);
    assertThat(e.reason()).isEqualTo(Reason.FAILURE_RATE);
    assertThat(e.observations()).isEqualTo(240);
    assertThat(e.failureRate()).isCloseTo(0.5, within(1e-9));
    assertThat(e.slowRate()).isCloseTo(40.0 / 240, within(1e-9));
    assertThat(e.probes()).isZero();
    assertThat(e.openNanos()).isEqualTo(30 * S);
    assertThat(e.nowNanos()).isEqualTo(123 * MS);
    assertThat(e.requestId()).isEqualTo(240);
  }

  @Test
  void aThrowingListenerNeverBreaksTheCallPath() {
    CircuitBreaker b =
        new CircuitBreaker(
            Harness.KEY,
            Harness.noJitter().build(),
            RandomSource.seeded(1),
            new BreakerListener() {
              @Override
              public void onTransition(TransitionEvent event) {
                throw new IllegalStateException("listener bug");
              }
            },
            0);
    for (int i = 0; i < 3; i++) {
      Permit p = new Permit();
      b.tryAcquire(p, 0);
      p.onOutcome(Outcome.CONNECT_FAILURE, 0);
    }
    assertThat(b.state()).isEqualTo(State.OPEN);
    assertThat(b.listenerErrorCount()).isEqualTo(1);
  }

  @Test
  void snapshotForTheAdminApi() {
    Harness h = new Harness(Harness.noJitter().build());
    h.tripWithConnectFailures();
    h.advanceMillis(1_000);
    BreakerSnapshot s = h.breaker.snapshot(h.now());
    assertThat(s.key()).isEqualTo(Harness.KEY);
    assertThat(s.state()).isEqualTo(State.OPEN);
    assertThat(s.openRemainingNanos()).isEqualTo(29 * S);
    assertThat(s.transitions()).isEqualTo(1);
    assertThat(s.mode()).isEqualTo(Mode.ENFORCE);
    assertThat(h.breaker.toString()).contains("route:/api/", "OPEN");
  }

  @Test
  void theTransitionTableRefusesIllegalMoves() {
    assertThat(Transition.isLegal(State.CLOSED, State.OPEN)).isTrue();
    assertThat(Transition.isLegal(State.OPEN, State.RAMPING)).isFalse();
    assertThat(Transition.isLegal(State.CLOSED, State.HALF_OPEN)).isFalse();
    assertThat(Transition.isLegal(State.FORCED_OPEN, State.HALF_OPEN)).isFalse();
    assertThatThrownBy(() -> Transition.of(State.CLOSED, State.RAMPING))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("transition : CLOSED -> RAMPING (expected: one listed in Transition)");
    for (Transition t : Transition.values()) {
      assertThat(Transition.of(t.from(), t.to())).isSameAs(t);
    }
  }

  @Test
  void invalidPoliciesReportEveryFieldAtOnce() {
    assertThatThrownBy(() ->
            BreakerPolicy.builder()
                .failureRate(1.5)
                .slowRate(0)
                .minRequests(0)
                .open(Duration.ofSeconds(30), Duration.ofSeconds(10), 1.0)
                .halfOpen(3, Duration.ofMillis(500), 4, Duration.ofSeconds(1))
                .ramp(0, Duration.ofSeconds(-1))
                .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("failure_rate : 1.5 (expected: in (0, 1])")
        .hasMessageContaining("slow.rate : 0.0 (expected: in (0, 1])")
        .hasMessageContaining("min_requests : 0 (expected: >= 1)")
        .hasMessageContaining("open.max : PT10S (expected: >= open.base PT30S)")
        .hasMessageContaining("open.jitter : 1.0 (expected: in [0, 1))")
        .hasMessageContaining("half_open.required : 4 (expected: in [1, 3])")
        .hasMessageContaining("ramp.from : 0.0 (expected: in (0, 1])")
        .hasMessageContaining("ramp.over : PT-1S (expected: >= 0)");
  }

  @Test
  void defaultsAreDesignMd() {
    BreakerPolicy p = BreakerPolicy.defaults();
    assertThat(p.windowKind()).isEqualTo(BreakerPolicy.WindowKind.TIME);
    assertThat(p.window()).isEqualTo(Duration.ofSeconds(10));
    assertThat(p.buckets()).isEqualTo(100);
    assertThat(p.minRequests()).isEqualTo(200);
    assertThat(p.failureRate()).isEqualTo(0.5);
    assertThat(p.slowRate()).isEqualTo(0.35);
    assertThat(p.slowWeight()).isEqualTo(0.5);
    assertThat(p.connectFailures()).isEqualTo(3);
    assertThat(p.connectFailuresWithin()).isEqualTo(Duration.ofSeconds(10));
    assertThat(p.openBase()).isEqualTo(Duration.ofSeconds(30));
    assertThat(p.openMax()).isEqualTo(Duration.ofMinutes(5));
    assertThat(p.openJitter()).isEqualTo(0.2);
    assertThat(p.probes()).isEqualTo(3);
    assertThat(p.probeSpacing()).isEqualTo(Duration.ofMillis(500));
    assertThat(p.probesRequired()).isEqualTo(2);
    assertThat(p.probeMaxLatency()).isEqualTo(Duration.ofSeconds(1));
    assertThat(p.probeMode()).isEqualTo(ProbeMode.LIVE);
    assertThat(p.rampFrom()).isEqualTo(0.05);
    assertThat(p.rampOver()).isEqualTo(Duration.ofSeconds(30));
    assertThat(p.flappingOpens()).isEqualTo(15);
    assertThat(p.flappingWithin()).isEqualTo(Duration.ofHours(1));
    assertThat(p.mode()).isEqualTo(Mode.ENFORCE);
    assertThat(p.toBuilder().build()).isEqualTo(p);
    assertThat(p.toBuilder().minRequests(10).build()).isNotEqualTo(p);
  }
}
