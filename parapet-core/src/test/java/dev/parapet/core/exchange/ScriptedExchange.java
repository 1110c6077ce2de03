package dev.parapet.core.exchange;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.deadline.DeadlinePolicy;
import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.retry.RetryPolicy;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A driver for tests: attempts go nowhere and timers do not fire by themselves; the test reports
 * what the origin did and fires timers. Every hook call is recorded, and releasing an attempt twice
 * fails the test at once.
 */
final class ScriptedExchange extends AttemptSequence<ScriptedExchange.Try> {

  /** An attempt of the scripted exchange. */
  static final class Try extends Attempt {
    final int number;
    int releases;
    boolean releasedComplete;

    Try(Kind kind, @Nullable CircuitBreaker breaker, AttemptPolicy policy, int number) {
      super(kind, breaker, policy);
      this.number = number;
    }
  }

  private final @Nullable CircuitBreaker breaker;
  private final AttemptPolicy policy;
  @Nullable CircuitBreaker fallbackBreaker;
  @Nullable AttemptPolicy fallbackPolicy;

  /** The driver refuses to start attempts (a full pool), reporting a local failure at once. */
  boolean poolFull;

  final List<Try> made = new ArrayList<>();
  final List<Try> started = new ArrayList<>();
  final List<Outcome> evidence = new ArrayList<>();
  final Map<Timer, Long> timers = new EnumMap<>(Timer.class);
  final List<Long> retryDecisions = new ArrayList<>();
  final List<HedgeDecision> hedgeDecisions = new ArrayList<>();
  @Nullable Try raceWinner;
  @Nullable ExchangeFailure failure;
  @Nullable Try failureCause;
  @Nullable Try succeededWith;

  /** A queued admission decided: null for admitted, else the reason; set when it was decided. */
  boolean admissionHeard;

  @Nullable RejectReason admissionShed;

  ScriptedExchange(
      @Nullable CircuitBreaker breaker,
      AttemptPolicy policy,
      DeadlinePolicy deadlines,
      long expiresAtNanos,
      @Nullable AdmissionController admission,
      boolean mayRetry,
      boolean mayHedge) {
    super(7, expiresAtNanos, deadlines, admission, 2, RequestKind.ORDINARY, mayRetry, mayHedge);
    this.breaker = breaker;
    this.policy = policy;
  }

  @Override
  protected Try pick(Attempt.Kind kind, @Nullable Try previous, long nowNanos) {
    Try t =
        new Try(
            kind,
            previous == null ? breaker : previous.breaker(),
            previous == null ? policy : previous.policy(),
            made.size());
    made.add(t);
    return t;
  }

  @Override
  protected @Nullable Try fallback(Try refused, long nowNanos) {
    AttemptPolicy p = fallbackPolicy;
    if (fallbackBreaker == null || p == null) {
      return null;
    }
    Try t = new Try(Attempt.Kind.FIRST, fallbackBreaker, p, made.size());
    made.add(t);
    return t;
  }

  @Override
  protected void startAttempt(Try attempt, long nowNanos) {
    started.add(attempt);
    if (poolFull) {
      onAttemptFailed(attempt, null, nowNanos);
    }
  }

  @Override
  protected void releaseAttempt(Try attempt, boolean complete) {
    attempt.releases++;
    attempt.releasedComplete = complete;
    if (attempt.releases > 1) {
      throw new AssertionError("released twice: " + attempt);
    }
  }

  @Override
  protected void recordEvidence(Try attempt, Outcome outcome, long latencyNanos, long now) {
    evidence.add(outcome);
  }

  @Override
  protected void schedule(Timer timer, long delayNanos) {
    if (!timers.isEmpty()) {
      // ExchangeHooks.schedule: at most one timer is pending at a time.
      throw new AssertionError("scheduled " + timer + " while pending: " + timers.keySet());
    }
    timers.put(timer, delayNanos);
  }

  @Override
  protected void cancelTimer(Timer timer) {
    timers.remove(timer);
  }

  @Override
  protected void admissionDecided(@Nullable RejectReason shed) {
    admissionHeard = true;
    admissionShed = shed;
  }

  @Override
  protected void succeeded(Try winner, long nowNanos) {
    succeededWith = winner;
  }

  @Override
  protected void failed(ExchangeFailure f, @Nullable Try cause, long nowNanos) {
    failure = f;
    failureCause = cause;
  }

  @Override
  protected void retryDecided(long decision) {
    retryDecisions.add(decision);
  }

  @Override
  protected void hedgeDecided(HedgeDecision decision) {
    hedgeDecisions.add(decision);
  }

  @Override
  protected void hedgeRaceEnded(Try winner) {
    raceWinner = winner;
  }

  /** Fires {@code timer} if it is pending; false when it is not. */
  boolean fire(Timer timer, long now) {
    if (timers.remove(timer) == null) {
      return false;
    }
    onTimer(timer, now);
    return true;
  }

  /** Hands a queued admission decision back, as a driver does on its own thread. */
  void resumeAdmission(long now) {
    if (!admissionHeard) {
      throw new AssertionError("no admission decision to resume");
    }
    admissionHeard = false;
    resumeAdmission(admissionShed, now);
  }

  /** The last attempt started. */
  Try last() {
    return started.get(started.size() - 1);
  }

  /** Whether {@code decision} was a retry that went ahead. */
  static boolean sent(long decision) {
    return RetryPolicy.isRetry(decision);
  }
}
