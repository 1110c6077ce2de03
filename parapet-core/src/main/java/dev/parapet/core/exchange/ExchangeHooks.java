package dev.parapet.core.exchange;

import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.retry.RetryRefusal;
import org.jspecify.annotations.Nullable;

/**
 * What an {@link AttemptSequence} leaves to the place it runs — its driver: picking hosts, moving
 * bytes, arming timers, answering the client. The proxy's exchange implements these over Netty, the
 * simulator's request in virtual time; the decisions between them are the sequence's alone.
 *
 * @param <A> the driver's attempt type
 */
public abstract class ExchangeHooks<A extends Attempt> {
  /** The two timers a sequence may ask for. */
  public enum Timer {
    /** A retry's backoff ended: call {@link AttemptSequence#onTimer} to make it. */
    RETRY,
    /**
     * The first attempt has been out for the hedge delay: call {@link AttemptSequence#onTimer} to
     * hedge.
     */
    HEDGE
  }

  /**
   * Makes an attempt of {@code kind}: picks its host and breaker. For a retry {@code previous} is
   * the failed attempt, for a hedge the running one: prefer another host, on the same pool.
   */
  protected abstract A pick(Attempt.Kind kind, @Nullable A previous, long nowNanos);

  /**
   * An attempt on the fallback pool, when the breaker refused {@code refused} (the request's first
   * attempt); null when there is no fallback.
   */
  protected @Nullable A fallback(A refused, long nowNanos) {
    return null;
  }

  /**
   * Starts {@code attempt} (state CONNECTING, {@link Attempt#timeoutNanos()} set): get it to the
   * origin, call {@link AttemptSequence#onSent} when the request went out, and arrange its timeout.
   * Failures, including ones found at once (pool full), are reported through {@link
   * AttemptSequence#onAttemptFailed}.
   */
  protected abstract void startAttempt(A attempt, long nowNanos);

  /**
   * The started {@code attempt} is over: give back its connection (reusable only when {@code
   * complete}, its response fully read) and its pool slot. Called exactly once per started attempt.
   */
  protected abstract void releaseAttempt(A attempt, boolean complete);

  /**
   * Evidence about the origin from {@code attempt}, just before its breaker permit completes with
   * it: outlier detection, latency and metrics. {@code latencyNanos} is -1 when the attempt never
   * reached the origin. Ignored outcomes ({@link Outcome#HEDGE_LOST}, {@link
   * Outcome#CLIENT_CANCELLED}, {@link Outcome#LOCAL_REJECTION}) come here too: they are counted,
   * and the breaker ignores them.
   */
  protected abstract void recordEvidence(A attempt, Outcome outcome, long latencyNanos, long now);

  /**
   * Asks for {@link AttemptSequence#onTimer} after {@code delayNanos}. At most one timer is pending
   * at a time: the hedge timer is cancelled (or has fired) before a retry's backoff is scheduled,
   * and the hedge timer is only armed when the first attempt starts.
   */
  protected abstract void schedule(Timer timer, long delayNanos);

  /** Forgets a timer asked for earlier (a no-op when none is pending). */
  protected abstract void cancelTimer(Timer timer);

  /**
   * Admission control decided about a queued request, on some other thread ({@code shed} is null
   * when admitted): hop to the driver's thread and call {@link AttemptSequence#resumeAdmission}.
   */
  protected abstract void admissionDecided(@Nullable RejectReason shed);

  /** The winner's response was delivered whole; its evidence is recorded. */
  protected abstract void succeeded(A winner, long nowNanos);

  /**
   * The request failed. {@code cause}: the refused attempt for {@link ExchangeFailure#BREAKER_OPEN}
   * and {@link ExchangeFailure#RETRY_BREAKER_OPEN}, the failed one for {@link
   * ExchangeFailure#ATTEMPT_FAILED} and {@link ExchangeFailure#TRUNCATED}, the waiting first
   * attempt (or null) otherwise.
   */
  protected abstract void failed(ExchangeFailure failure, @Nullable A cause, long nowNanos);

  /** A retry was decided: a delay ({@code >= 0}) or a {@link RetryRefusal} code. For metrics. */
  protected void retryDecided(long decision) {}

  /** A hedge was decided ({@link HedgeDecision#HEDGE} when sent). For metrics. */
  protected void hedgeDecided(HedgeDecision decision) {}

  /** A request that hedged got its answer from {@code winner} (the hedge or the first attempt). */
  protected void hedgeRaceEnded(A winner) {}
}
