package dev.parapet.core.exchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.admission.AdmissionListener;
import dev.parapet.core.admission.AdmissionTicket;
import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Decision;
import dev.parapet.core.breaker.Permit;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.deadline.Deadline;
import dev.parapet.core.deadline.DeadlinePolicy;
import dev.parapet.core.fleet.FleetLimitListener;
import dev.parapet.core.fleet.FleetLimitSettings;
import dev.parapet.core.fleet.FleetLimiter;
import dev.parapet.core.fleet.Lease;
import dev.parapet.core.fleet.LeaseSource;
import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.hedge.HedgeRateBudget;
import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.limit.FixedLimit;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.retry.RetryAfter;
import dev.parapet.core.retry.RetryBudget;
import dev.parapet.core.retry.RetryOn;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.retry.RetryRefusal;
import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** The decision sequence with a scripted driver: every decision, in virtual time. */
class AttemptSequenceTest {
  private static final long MS = 1_000_000L;
  private static final long S = 1_000 * MS;
  private static final DeadlinePolicy DEADLINES =
      new DeadlinePolicy(Duration.ofMillis(50), Duration.ofMillis(20));

  private long now = 1_000 * S;
  private final ExtraLoadBudget extra =
      new ExtraLoadBudget(new RetryBudget(0.2, 5), ExtraLoadBudget.Sharing.SHARED);

  private static CircuitBreaker breaker(long now) {
    return breaker(BreakerPolicy.builder().minRequests(10).build(), now);
  }

  private static CircuitBreaker breaker(BreakerPolicy p, long now) {
    return new CircuitBreaker(
        BreakerKey.of(Scope.ORIGIN, "o"), p, RandomSource.seeded(1), BreakerListener.NONE, now);
  }

  private AttemptPolicy policy(int attempts, @Nullable Duration hedgeAfter) {
    RetryPolicy retry =
        new RetryPolicy(
            attempts,
            Duration.ofMillis(25),
            Duration.ofMillis(250),
            Duration.ofMillis(20),
            RandomSource.seeded(2),
            extra);
    RollingLatencyHistogram latency = RollingLatencyHistogram.withDefaults(now);
    AttemptPolicy.Builder b =
        AttemptPolicy.builder(Duration.ofSeconds(3), retry)
            .latency(latency)
            .retryOn(new RetryOn(true, true, List.of("503")));
    if (hedgeAfter != null) {
      b.hedge(
          new HedgePolicy(
              latency,
              0.95,
              Duration.ofMillis(20),
              20,
              Duration.ofMillis(100),
              new HedgeRateBudget(1.0, 10),
              extra),
          hedgeAfter);
    }
    return b.build();
  }

  private ScriptedExchange exchange(
      @Nullable CircuitBreaker b, AttemptPolicy p, @Nullable AdmissionController admission) {
    return new ScriptedExchange(
        b, p, DEADLINES, Deadline.expiresAt(8 * S, now), admission, true, true);
  }

  /** Another request takes a slot of {@code ac} (its only one, in these tests). */
  private AdmissionTicket occupy(AdmissionController ac) {
    AdmissionTicket other = new AdmissionTicket(NO_LISTENER);
    ac.offer(other, 2, RequestKind.ORDINARY, now);
    return other;
  }

  private static AdmissionController admission(int limit, int queue) {
    return new AdmissionController(FixedLimit.of(limit), queue, 20 * MS, 100 * MS);
  }

  @Test
  void aHealthyAnswerWinsIsRecordedOnceAndTeachesAdmission() {
    CircuitBreaker b = breaker(now);
    AdmissionController ac = admission(10, 0);
    ScriptedExchange x = exchange(b, policy(2, null), ac);

    x.begin(now);
    ScriptedExchange.Try first = x.last();
    assertThat(first.kind()).isEqualTo(Attempt.Kind.FIRST);
    assertThat(first.state()).isEqualTo(Attempt.State.CONNECTING);
    assertThat(first.timeoutNanos()).isEqualTo(3 * S); // min(origin timeout, 8 s - reserve)
    assertThat(ac.inflight()).isEqualTo(1);
    x.onSent(first, now);
    now += 40 * MS;
    assertThat(x.onResponseHead(first, 200, RetryAfter.ABSENT, now)).isTrue();
    assertThat(x.phase()).isEqualTo(ExchangePhase.ANSWERING);
    assertThat(x.evidence).isEmpty(); // evidence comes when the response is complete
    x.onResponseComplete(first, now);

    assertThat(x.phase()).isEqualTo(ExchangePhase.SUCCEEDED);
    assertThat(x.succeededWith).isSameAs(first);
    assertThat(x.evidence).containsExactly(Outcome.SUCCESS);
    assertThat(b.snapshot(now).calls()).isEqualTo(1);
    assertThat(first.releases).isEqualTo(1);
    assertThat(first.releasedComplete).isTrue();
    assertThat(ac.inflight()).isZero();
    assertThat(extra.retryBudget().activeRequests()).isZero();
  }

  @Test
  void anOpenBreakerFailsFastBeforeAdmission() {
    CircuitBreaker b = breaker(now);
    b.forceOpen(now);
    AdmissionController ac = admission(10, 0);
    ScriptedExchange x = exchange(b, policy(2, null), ac);

    x.begin(now);

    assertThat(x.failure).isEqualTo(ExchangeFailure.BREAKER_OPEN);
    assertThat(x.failureCause).isNotNull();
    assertThat(x.started).isEmpty();
    assertThat(ac.inflight()).isZero();
    assertThat(b.misuseCount()).isZero();
  }

  @Test
  void theFallbackTakesTheRequestWhenTheBreakerRefuses() {
    CircuitBreaker b = breaker(now);
    b.forceOpen(now);
    ScriptedExchange x = exchange(b, policy(2, null), null);
    CircuitBreaker fb = breaker(now);
    x.fallbackBreaker = fb;
    x.fallbackPolicy = policy(1, null);

    x.begin(now);

    assertThat(x.started).hasSize(1);
    assertThat(x.last().breaker()).isSameAs(fb);
    assertThat(x.last().policy()).isSameAs(x.fallbackPolicy);
  }

  @Test
  void aProbeThatAdmissionShedsIsGivenBackUnused() {
    BreakerPolicy p =
        BreakerPolicy.builder()
            .minRequests(10)
            .open(Duration.ofSeconds(1), Duration.ofSeconds(8), 0)
            .halfOpen(3, Duration.ofMillis(500), 2, Duration.ofSeconds(1))
            .build();
    CircuitBreaker b = breaker(p, now);
    b.forceOpen(now);
    b.reset(now); // closed; now trip it the ordinary way
    for (int i = 0; i < 10; i++) {
      Permit permit = new Permit();
      b.tryAcquire(permit, now);
      permit.onOutcome(Outcome.TIMEOUT, now);
    }
    assertThat(b.state()).isEqualTo(State.OPEN);
    now += 2 * S; // the open time is over: the next call is a probe
    AdmissionController ac = admission(1, 0);
    AdmissionTicket other = occupy(ac); // takes the only slot
    ScriptedExchange x = exchange(b, policy(2, null), ac);

    x.begin(now);

    assertThat(x.failure).isEqualTo(ExchangeFailure.SHED);
    assertThat(x.shedReason()).isEqualTo(RejectReason.LIMIT_REACHED);
    assertThat(x.started).isEmpty();
    assertThat(x.evidence).isEmpty();
    // The probe permit went back unused: none is counted as issued, and once the spacing has
    // passed the next call is a probe again.
    assertThat(b.snapshot(now).probesIssued()).isZero();
    assertThat(b.tryAcquire(new Permit(), now + 500 * MS)).isEqualTo(Decision.PROBE);
  }

  @Test
  void aRetryableStatusIsRetriedAfterItsBackoffAndTheBudgetPlaceComesBack() {
    CircuitBreaker b = breaker(now);
    ScriptedExchange x = exchange(b, policy(2, null), null);
    x.begin(now);
    ScriptedExchange.Try first = x.last();
    x.onSent(first, now);

    assertThat(x.onResponseHead(first, 503, RetryAfter.ABSENT, now)).isFalse();
    assertThat(x.evidence).containsExactly(Outcome.FAILURE_STATUS);
    assertThat(first.state()).isEqualTo(Attempt.State.ENDED);
    assertThat(first.releasedComplete).isFalse(); // its body is unread: the connection goes
    assertThat(x.retryDecisions).hasSize(1);
    assertThat(ScriptedExchange.sent(x.retryDecisions.get(0))).isTrue();
    assertThat(extra.retryBudget().activeRetries()).isEqualTo(1);

    now += 300 * MS;
    assertThat(x.fire(AttemptSequence.Timer.RETRY, now)).isTrue();
    ScriptedExchange.Try retry = x.last();
    assertThat(retry.kind()).isEqualTo(Attempt.Kind.RETRY);
    x.onSent(retry, now);
    assertThat(x.onResponseHead(retry, 200, RetryAfter.ABSENT, now)).isTrue();
    x.onResponseComplete(retry, now);

    assertThat(x.phase()).isEqualTo(ExchangePhase.SUCCEEDED);
    assertThat(x.attempts()).isEqualTo(2);
    assertThat(extra.retryBudget().activeRetries()).isZero();
    assertThat(extra.retryBudget().activeRequests()).isZero();
  }

  @Test
  void aRetryThatCannotFinishInTheDeadlineIsRefusedAndTheErrorIsForwarded() {
    CircuitBreaker b = breaker(now);
    ScriptedExchange x =
        new ScriptedExchange(
            b, policy(2, null), DEADLINES, Deadline.expiresAt(80 * MS, now), null, true, true);
    x.begin(now);
    ScriptedExchange.Try first = x.last();
    x.onSent(first, now);
    now += 25 * MS; // 5 ms of usable time left: below min_useful

    assertThat(x.onResponseHead(first, 503, RetryAfter.ABSENT, now)).isTrue();

    assertThat(x.retryDecisions).containsExactly(RetryRefusal.DEADLINE.code());
    assertThat(x.phase()).isEqualTo(ExchangePhase.ANSWERING);
  }

  @Test
  void aFailureWithoutAConnectionIsNotEvidence() {
    CircuitBreaker b = breaker(now);
    ScriptedExchange x = exchange(b, policy(2, null), null);
    x.begin(now);

    x.onAttemptFailed(x.last(), null, now + 3 * S); // its timeout, still connecting

    assertThat(x.failure).isEqualTo(ExchangeFailure.ATTEMPT_FAILED);
    assertThat(x.evidence).isEmpty();
    assertThat(x.retryDecisions).isEmpty(); // a local failure is never retried
    assertThat(b.snapshot(now).calls()).isZero();
  }

  @Test
  void aFullPoolFailsTheRequestWithoutEvidence() {
    CircuitBreaker b = breaker(now);
    ScriptedExchange x = exchange(b, policy(2, null), null);
    x.poolFull = true;

    x.begin(now);

    assertThat(x.failure).isEqualTo(ExchangeFailure.ATTEMPT_FAILED);
    assertThat(x.evidence).isEmpty();
    assertThat(x.timers).isEmpty(); // no hedge armed for an attempt that never started
    assertThat(b.misuseCount()).isZero();
  }

  @Test
  void aConnectFailureIsEvidenceAndIsRetriedOnAnotherAttempt() {
    CircuitBreaker b = breaker(now);
    ScriptedExchange x = exchange(b, policy(2, null), null);
    x.begin(now);

    x.onAttemptFailed(x.last(), Outcome.CONNECT_FAILURE, now);

    assertThat(x.evidence).containsExactly(Outcome.CONNECT_FAILURE);
    assertThat(x.timers).containsKey(AttemptSequence.Timer.RETRY);
    assertThat(x.phase()).isEqualTo(ExchangePhase.ATTEMPTING);
  }

  @Test
  void theHedgeRacesTheFirstAttemptAndTheLoserIsIgnored() {
    CircuitBreaker b = breaker(now);
    ScriptedExchange x = exchange(b, policy(2, Duration.ofMillis(100)), null);
    x.begin(now);
    ScriptedExchange.Try first = x.last();
    x.onSent(first, now);
    assertThat(x.timers).containsEntry(AttemptSequence.Timer.HEDGE, 100 * MS);

    now += 100 * MS;
    x.fire(AttemptSequence.Timer.HEDGE, now);
    ScriptedExchange.Try hedge = x.last();
    assertThat(hedge.kind()).isEqualTo(Attempt.Kind.HEDGE);
    assertThat(x.hedgeDecisions).containsExactly(HedgeDecision.HEDGE);
    x.onSent(hedge, now);
    now += 10 * MS;
    assertThat(x.onResponseHead(hedge, 200, RetryAfter.ABSENT, now)).isTrue();

    assertThat(x.raceWinner).isSameAs(hedge);
    assertThat(first.state()).isEqualTo(Attempt.State.ENDED);
    assertThat(x.evidence).containsExactly(Outcome.HEDGE_LOST);
    x.onResponseComplete(hedge, now);
    assertThat(x.evidence).containsExactly(Outcome.HEDGE_LOST, Outcome.SUCCESS);
    assertThat(b.snapshot(now).calls()).isEqualTo(1); // the loser is not a call
    assertThat(extra.retryBudget().activeRetries()).isZero();
  }

  @Test
  void aLateAnswerOfTheLoserIsDropped() {
    CircuitBreaker b = breaker(now);
    ScriptedExchange x = exchange(b, policy(2, Duration.ofMillis(100)), null);
    x.begin(now);
    ScriptedExchange.Try first = x.last();
    x.onSent(first, now);
    x.fire(AttemptSequence.Timer.HEDGE, now + 100 * MS);
    ScriptedExchange.Try hedge = x.last();
    x.onSent(hedge, now + 100 * MS);
    x.onResponseHead(first, 200, RetryAfter.ABSENT, now + 150 * MS);

    assertThat(x.onResponseHead(hedge, 200, RetryAfter.ABSENT, now + 160 * MS)).isFalse();
    assertThat(x.raceWinner).isSameAs(first);
    assertThat(hedge.releases).isEqualTo(1);
  }

  @Test
  void aRetryIsNeverHedged() {
    CircuitBreaker b = breaker(now);
    ScriptedExchange x = exchange(b, policy(2, Duration.ofMillis(100)), null);
    x.begin(now);
    x.onSent(x.last(), now);
    assertThat(x.timers).containsKey(AttemptSequence.Timer.HEDGE);

    x.onAttemptFailed(x.last(), Outcome.CONNECT_FAILURE, now + 10 * MS);
    assertThat(x.timers)
        .as("the first attempt's hedge timer goes with it")
        .doesNotContainKey(AttemptSequence.Timer.HEDGE);
    x.fire(AttemptSequence.Timer.RETRY, now + 40 * MS);
    x.onSent(x.last(), now + 40 * MS);
    x.onTimer(AttemptSequence.Timer.HEDGE, now + 100 * MS); // a late tick of the old timer

    assertThat(x.started)
        .extracting(Attempt::kind)
        .containsExactly(Attempt.Kind.FIRST, Attempt.Kind.RETRY);
    assertThat(x.hedgeDecisions).isEmpty();
  }

  @Test
  void noHedgeWhileTheBreakerIsNotClosed() {
    BreakerPolicy p =
        BreakerPolicy.builder().minRequests(10).mode(dev.parapet.core.breaker.Mode.SHADOW).build();
    CircuitBreaker b = breaker(p, now);
    b.forceOpen(now); // shadow: still admits, but is not CLOSED
    ScriptedExchange x = exchange(b, policy(2, Duration.ofMillis(100)), null);
    x.begin(now);
    x.onSent(x.last(), now);

    x.fire(AttemptSequence.Timer.HEDGE, now + 100 * MS);

    assertThat(x.hedgeDecisions).containsExactly(HedgeDecision.BREAKER_NOT_CLOSED);
    assertThat(x.started).hasSize(1);
  }

  @Test
  void anOverloadedListenerMakesNoExtraLoad() {
    CircuitBreaker b = breaker(now);
    AdmissionController ac = admission(10, 0);
    ScriptedExchange x = exchange(b, policy(2, Duration.ofMillis(100)), ac);
    x.begin(now);
    ScriptedExchange.Try first = x.last();
    x.onSent(first, now);
    ac.overloadLevel(OverloadLevel.DISABLE_HEDGES_AND_RETRIES, now);

    x.fire(AttemptSequence.Timer.HEDGE, now + 100 * MS);
    assertThat(x.onResponseHead(first, 503, RetryAfter.ABSENT, now + 200 * MS)).isTrue();

    assertThat(x.hedgeDecisions).containsExactly(HedgeDecision.OVERLOAD);
    assertThat(x.retryDecisions).containsExactly(RetryRefusal.OVERLOAD.code());
  }

  @Test
  void aFailureAfterTheHeadWentOutTruncatesTheResponse() {
    CircuitBreaker b = breaker(now);
    AdmissionController ac = admission(10, 0);
    ScriptedExchange x = exchange(b, policy(2, null), ac);
    x.begin(now);
    ScriptedExchange.Try first = x.last();
    x.onSent(first, now);
    x.onResponseHead(first, 200, RetryAfter.ABSENT, now);

    x.onAttemptFailed(first, Outcome.CONNECT_FAILURE, now);

    assertThat(x.failure).isEqualTo(ExchangeFailure.TRUNCATED);
    assertThat(x.evidence).containsExactly(Outcome.CONNECT_FAILURE);
    assertThat(x.retryDecisions).isEmpty();
    assertThat(ac.inflight()).isZero();
  }

  @Test
  void aQueuedRequestWhoseClientLeavesLeavesTheQueue() {
    CircuitBreaker b = breaker(now);
    AdmissionController ac = admission(1, 10);
    AdmissionTicket other = occupy(ac);
    ScriptedExchange x = exchange(b, policy(2, null), ac);
    x.begin(now);
    assertThat(x.phase()).isEqualTo(ExchangePhase.ADMISSION);
    assertThat(ac.queueDepth()).isEqualTo(1);

    x.cancel(now);

    assertThat(x.phase()).isEqualTo(ExchangePhase.CANCELLED);
    assertThat(ac.queueDepth()).isZero();
    assertThat(b.misuseCount()).isZero();
    other.permit().onSuccess(now); // frees the slot: nobody is left to admit
    assertThat(x.admissionHeard).isFalse();
  }

  @Test
  void aQueuedRequestGoesOnOnItsOwnThreadWhenAdmitted() {
    CircuitBreaker b = breaker(now);
    AdmissionController ac = admission(1, 10);
    AdmissionTicket other = occupy(ac);
    ScriptedExchange x = exchange(b, policy(2, null), ac);
    x.begin(now);

    other.permit().onSuccess(now + MS);
    assertThat(x.started).isEmpty(); // the decision only hops
    x.resumeAdmission(now + MS);

    assertThat(x.started).hasSize(1);
    assertThat(x.phase()).isEqualTo(ExchangePhase.ATTEMPTING);
  }

  @Test
  void aDeadlineSpentInTheQueueFailsTheRequestAndFreesItsSlot() {
    CircuitBreaker b = breaker(now);
    AdmissionController ac = admission(1, 10);
    AdmissionTicket other = occupy(ac);
    ScriptedExchange x = exchange(b, policy(2, null), ac);
    x.begin(now);
    now += 7_990 * MS; // 8 s budget, 50 ms reserve: nothing useful is left

    other.permit().onSuccess(now);
    x.resumeAdmission(now);

    assertThat(x.failure).isEqualTo(ExchangeFailure.DEADLINE);
    assertThat(x.started).isEmpty();
    assertThat(ac.inflight()).isZero();
  }

  /** A limiter holding {@code tokens} leased tokens and a source that never answers again. */
  private FleetLimiter fleet(int tokens) {
    int[] asked = {0};
    LeaseSource src =
        n ->
            asked[0]++ == 0
                ? CompletableFuture.completedFuture(new Lease(tokens, S))
                : new CompletableFuture<>();
    FleetLimiter l =
        new FleetLimiter(
            FleetLimitSettings.of(1000, 100, 1, Duration.ofSeconds(10), tokens),
            src,
            () -> now,
            FleetLimitListener.NONE);
    l.tick(now);
    return l;
  }

  private AttemptPolicy withFleet(AttemptPolicy p, FleetLimiter l, @Nullable Duration hedgeAfter) {
    RetryPolicy retry = p.retry();
    AttemptPolicy.Builder b =
        AttemptPolicy.builder(Duration.ofSeconds(3), retry)
            .latency(java.util.Objects.requireNonNull(p.latency()))
            .retryOn(p.retryOn())
            .fleetLimit(l);
    if (hedgeAfter != null) {
      b.hedge(java.util.Objects.requireNonNull(p.hedge()), hedgeAfter);
    }
    return b.build();
  }

  @Test
  void withoutAFleetTokenTheRequestFailsBeforeAnyAttemptAndGivesItsHoldsBack() {
    CircuitBreaker b = breaker(now);
    AdmissionController ac = admission(10, 0);
    FleetLimiter l = fleet(1);
    AttemptPolicy p = withFleet(policy(2, null), l, null);
    ScriptedExchange ok = exchange(b, p, ac);
    ok.begin(now);
    assertThat(ok.started).hasSize(1);

    ScriptedExchange refused = exchange(b, p, ac);
    refused.begin(now);
    assertThat(refused.failure).isEqualTo(ExchangeFailure.FLEET_LIMIT);
    assertThat(refused.started).isEmpty();
    assertThat(ac.inflight()).as("only the first request's slot").isEqualTo(1);
    assertThat(l.stats().refused()).isEqualTo(1);
    assertThat(extra.retryBudget().activeRequests()).isEqualTo(1);
  }

  @Test
  void aRetryNeedsAFleetTokenToo() {
    CircuitBreaker b = breaker(now);
    FleetLimiter l = fleet(1);
    ScriptedExchange x = exchange(b, withFleet(policy(2, null), l, null), null);
    x.begin(now);
    ScriptedExchange.Try first = x.last();
    x.onSent(first, now);
    assertThat(x.onResponseHead(first, 503, RetryAfter.ABSENT, now)).isFalse();
    now += 300 * MS;
    x.fire(AttemptSequence.Timer.RETRY, now);

    assertThat(x.failure).isEqualTo(ExchangeFailure.FLEET_LIMIT);
    assertThat(x.started).hasSize(1);
    assertThat(x.made.get(x.made.size() - 1).state()).isEqualTo(Attempt.State.ENDED);
    assertThat(extra.retryBudget().activeRetries()).isZero();
    assertThat(extra.retryBudget().activeRequests()).isZero();
    assertThat(b.snapshot(now).calls()).as("the refused retry is no call").isEqualTo(1);
  }

  @Test
  void aHedgeWithoutAFleetTokenIsNotSent() {
    CircuitBreaker b = breaker(now);
    FleetLimiter l = fleet(1);
    ScriptedExchange x =
        exchange(b, withFleet(policy(2, Duration.ofMillis(100)), l, Duration.ofMillis(100)), null);
    x.begin(now);
    ScriptedExchange.Try first = x.last();
    x.onSent(first, now);
    now += 100 * MS;
    x.fire(AttemptSequence.Timer.HEDGE, now);

    assertThat(x.hedgeDecisions).containsExactly(HedgeDecision.FLEET_LIMIT);
    assertThat(x.started).hasSize(1);
    assertThat(x.onResponseHead(first, 200, RetryAfter.ABSENT, now)).isTrue();
    x.onResponseComplete(first, now);
    assertThat(x.phase()).isEqualTo(ExchangePhase.SUCCEEDED);
    assertThat(extra.retryBudget().activeRetries()).isZero();
  }

  @Test
  void illegalAttemptMovesThrow() {
    ScriptedExchange.Try t = new ScriptedExchange.Try(Attempt.Kind.FIRST, null, policy(1, null), 0);
    t.moveTo(Attempt.State.ENDED);
    assertThatThrownBy(() -> t.moveTo(Attempt.State.SENT))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("ENDED -> SENT");
  }

  @Test
  void anAttemptIsItsOwnBreakerPermitCompletedOnceWhenItEnds() {
    CircuitBreaker b = breaker(now);
    ScriptedExchange x = exchange(b, policy(2, null), null);
    assertThat(x.expiresAtNanos()).isEqualTo(Deadline.expiresAt(8 * S, now));
    x.begin(now);
    ScriptedExchange.Try first = x.last();
    assertThat(first.breaker()).isSameAs(b);
    assertThat(first.isActive()).isTrue();
    assertThat(first.requestId()).isEqualTo(7);
    assertThat(first.startNanos()).isEqualTo(now);
    x.onSent(first, now);
    x.onResponseHead(first, 200, RetryAfter.ABSENT, now + 50 * MS);
    assertThat(first.isActive()).isTrue(); // its evidence comes with the complete response
    x.onResponseComplete(first, now + 60 * MS);
    assertThat(first.isActive()).isFalse();
    assertThat(b.snapshot(now + 60 * MS).calls()).isEqualTo(1);
    assertThat(b.misuseCount()).isZero();
  }

  @Test
  void withoutABreakerEveryAttemptGoes() {
    ScriptedExchange x = exchange(null, policy(2, null), null);
    x.begin(now);
    x.onSent(x.last(), now);
    x.onResponseHead(x.last(), 200, RetryAfter.ABSENT, now);
    x.onResponseComplete(x.last(), now);
    assertThat(x.phase()).isEqualTo(ExchangePhase.SUCCEEDED);
  }

  private static final AdmissionListener NO_LISTENER =
      new AdmissionListener() {
        @Override
        public void onAdmitted(AdmissionTicket ticket, long nowNanos) {}

        @Override
        public void onRejected(AdmissionTicket ticket, RejectReason reason, long nowNanos) {}
      };
}
