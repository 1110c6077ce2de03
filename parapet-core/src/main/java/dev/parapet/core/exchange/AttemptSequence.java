package dev.parapet.core.exchange;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.admission.AdmissionListener;
import dev.parapet.core.admission.AdmissionTicket;
import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Decision;
import dev.parapet.core.breaker.State;
import dev.parapet.core.deadline.DeadlinePolicy;
import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.retry.BudgetSlot;
import dev.parapet.core.retry.RetryAfter;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.retry.RetryRefusal;
import org.jspecify.annotations.Nullable;

/**
 * One request's way to the origin: every decision between "this request needs the origin" and "it
 * is answered", in one order, with no network and no clock of its own. The proxy's exchange and the
 * simulator's request both extend it, so the simulator runs the decisions the proxy runs.
 *
 * <pre>
 * begin ─► pick (host, breaker) ─► breaker ─refused─► fallback pick ─► breaker ─refused─► BREAKER_OPEN
 *                                    │ permitted (a probe, when half-open)
 *                                    ▼
 *          admission (limit, CoDel queue, priority) ─shed─► SHED (a probe permit is given back)
 *                                    │ admitted, now or later from the queue
 *                                    ▼
 *          deadline: usable time ≥ min_useful? ─no─► DEADLINE
 *                                    ▼
 *          attempt, timeout min(origin timeout, usable) ── hedge timer at the origin's p95
 *                                    ▼
 * response head ─► classify ─► retryable status and (a sibling runs or a retry fits)? ─► discard it
 *                    │ otherwise it wins: the sibling is cancelled (HEDGE_LOST, not evidence)
 *                    ▼
 * response complete ─► evidence ─► admission learns from successes only ─► SUCCEEDED
 * attempt failed ─► evidence ─► a sibling runs? wait │ retryable and a retry fits? retry after a
 *                                                      backoff │ else ATTEMPT_FAILED (TRUNCATED once
 *                                                      a response head went out)
 * </pre>
 *
 * <p>Evidence is recorded in one place ({@code end}): each admitted attempt completes its breaker
 * permit exactly once, with its outcome when it reached the origin or unused when it did not (shed,
 * pool full, cancelled while connecting), so locally made errors never count against the origin.
 * Retries and hedges draw from the origin's {@link AttemptPolicy#extraLoad() extra-load budget};
 * only one hedge per request, never while a breaker is not CLOSED, never while the overload manager
 * says so. Admission learns only from healthy answers: a slow or failing origin is its breaker's
 * business, and letting its latency shrink the listener-wide limit would starve healthy routes.
 *
 * <p>The subclass is the driver: it picks hosts, moves bytes, arms timers and answers the client,
 * through the hooks below, and reports what happened through the {@code on…} methods. Everything
 * runs on one thread (the driver's), except {@link #onAdmitted}/{@link #onRejected}, which
 * admission control calls from whichever thread freed a slot: they only tell the driver ({@link
 * #admissionDecided}), which hops to its own thread and calls {@link #resumeAdmitted} or {@link
 * #resumeShed}. Time is always passed in.
 *
 * @param <A> the driver's attempt type
 */
public abstract class AttemptSequence<A extends Attempt> implements AdmissionListener {
  /** Where the request is. Legal moves are listed by {@link #mayMoveTo}. */
  public enum Phase {
    /** {@link #begin} not called yet. */
    NEW,
    /** The breaker let the first attempt go; admission control has not admitted it yet. */
    ADMISSION,
    /** Attempts run, or a retry is due; no response head went to the client yet. */
    ATTEMPTING,
    /** A winning attempt's response is being delivered. */
    ANSWERING,
    /** Answered by the origin. */
    SUCCEEDED,
    /** Answered with a local error ({@link Failure}). */
    FAILED,
    /** The client went away first. */
    CANCELLED;

    /** Whether the request is over. */
    public boolean isOver() {
      return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }

    boolean mayMoveTo(Phase next) {
      return switch (this) {
        case NEW -> next == ADMISSION || next == FAILED || next == CANCELLED;
        case ADMISSION -> next == ATTEMPTING || next == FAILED || next == CANCELLED;
        case ATTEMPTING -> next == ANSWERING || next == FAILED || next == CANCELLED;
        case ANSWERING -> next == SUCCEEDED || next == FAILED || next == CANCELLED;
        case SUCCEEDED, FAILED, CANCELLED -> false;
      };
    }
  }

  /** Why the sequence failed; the driver turns it into an answer. */
  public enum Failure {
    /** The breaker refused the first attempt (and the fallback's breaker, if any, refused too). */
    BREAKER_OPEN,
    /** Admission control shed the request ({@link #shedReason()}). */
    SHED,
    /** The deadline left less than {@code min_useful} before the first attempt could start. */
    DEADLINE,
    /** The deadline left less than {@code min_useful} when a retry was due. */
    DEADLINE_BEFORE_RETRY,
    /** A retry was due but its breaker had opened meanwhile. */
    RETRY_BREAKER_OPEN,
    /** The last attempt failed and nothing else may be tried. */
    ATTEMPT_FAILED,
    /** The winning attempt failed after its response head went to the client. */
    TRUNCATED
  }

  /** The two timers a sequence may ask for. */
  public enum Timer {
    /** A retry's backoff ended: call {@link #onTimer} to make it. */
    RETRY,
    /** The first attempt has been out for the hedge delay: call {@link #onTimer} to hedge. */
    HEDGE
  }

  private final long requestId;
  private final long expiresAtNanos;
  private final DeadlinePolicy deadlines;
  private final @Nullable AdmissionController admission;
  private @Nullable AdmissionTicket ticket;
  private final int priority;
  private final RequestKind requestKind;
  private final boolean mayRetry;
  private final boolean mayHedge;

  private Phase phase = Phase.NEW;
  private @Nullable AttemptPolicy policy;
  private @Nullable A main;
  private @Nullable A hedge;
  private @Nullable A winner;
  private @Nullable A retryAfter;
  private @Nullable RejectReason shedReason;
  // Made when first needed: most requests never retry or hedge.
  private @Nullable BudgetSlot retrySlot;
  private @Nullable BudgetSlot hedgeSlot;
  private int attempts;
  private int hedges;

  /**
   * A sequence for one request.
   *
   * @param requestId the request's id, carried by its breaker permits into transition events
   * @param expiresAtNanos when the request's budget ends ({@code Deadline.expiresAt(min(route
   *     timeout, incoming deadline), start)})
   * @param admission the listener's admission control, or null when nothing limits concurrency
   * @param priority the request's class for admission, 1 (critical) to 4 (background)
   * @param mayRetry the request may be sent again (idempotent, or opted in, and without a body)
   * @param mayHedge the request may be sent twice at once (idempotent and without a body)
   */
  protected AttemptSequence(
      long requestId,
      long expiresAtNanos,
      DeadlinePolicy deadlines,
      @Nullable AdmissionController admission,
      int priority,
      RequestKind requestKind,
      boolean mayRetry,
      boolean mayHedge) {
    this.requestId = requestId;
    this.expiresAtNanos = expiresAtNanos;
    this.deadlines = deadlines;
    this.admission = admission;
    this.priority = priority;
    this.requestKind = requestKind;
    this.mayRetry = mayRetry;
    this.mayHedge = mayHedge && mayRetry;
  }

  // ---------------------------------------------------------------------------------------------
  // Hooks: what the driver does

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
   * origin, call {@link #onSent} when the request went out, and arrange its timeout. Failures,
   * including ones found at once (pool full), are reported through {@link #onAttemptFailed}.
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

  /** Asks for {@link #onTimer} after {@code delayNanos}. */
  protected abstract void schedule(Timer timer, long delayNanos);

  /** Forgets a timer asked for earlier (a no-op when none is pending). */
  protected abstract void cancelTimer(Timer timer);

  /**
   * Admission control decided about a queued request, on some other thread: hop to the driver's
   * thread and call {@link #resumeAdmitted} (when {@code shed} is null) or {@link #resumeShed}.
   */
  protected abstract void admissionDecided(@Nullable RejectReason shed);

  /** The winner's response was delivered whole; its evidence is recorded. */
  protected abstract void succeeded(A winner, long nowNanos);

  /**
   * The request failed. {@code cause}: the refused attempt for {@link Failure#BREAKER_OPEN} and
   * {@link Failure#RETRY_BREAKER_OPEN}, the failed one for {@link Failure#ATTEMPT_FAILED} and
   * {@link Failure#TRUNCATED}, the waiting first attempt (or null) otherwise.
   */
  protected abstract void failed(Failure failure, @Nullable A cause, long nowNanos);

  /** A retry was decided: a delay ({@code >= 0}) or a {@link RetryRefusal} code. For metrics. */
  protected void retryDecided(long decision) {}

  /** A hedge was decided ({@link HedgeDecision#HEDGE} when sent). For metrics. */
  protected void hedgeDecided(HedgeDecision decision) {}

  /** A request that hedged got its answer from {@code winner} (the hedge or the first attempt). */
  protected void hedgeRaceEnded(A winner) {}

  // ---------------------------------------------------------------------------------------------
  // What the driver reports

  /** Runs the gate: pick, breaker (then the fallback's), admission, deadline, first attempt. */
  public final void begin(long now) {
    A first = pick(Attempt.Kind.FIRST, null, now);
    if (!acquire(first, now)) {
      A alternative = fallback(first, now);
      if (alternative == null || !acquire(alternative, now)) {
        moveTo(Phase.FAILED);
        failed(Failure.BREAKER_OPEN, first, now);
        return;
      }
      first = alternative;
    }
    main = first;
    policy = first.policy();
    moveTo(Phase.ADMISSION);
    AdmissionController ac = admission;
    if (ac == null) {
      resumeAdmitted(now);
      return;
    }
    AdmissionTicket t = new AdmissionTicket(this);
    ticket = t;
    switch (ac.offer(t, priority, requestKind, now)) {
      case ADMITTED -> resumeAdmitted(now);
      case QUEUED -> {} // onAdmitted or onRejected comes, exactly once
      case REJECTED -> resumeShed(reason(t.rejectReason()), now);
    }
  }

  @Override
  public final void onAdmitted(AdmissionTicket t, long nowNanos) {
    admissionDecided(null);
  }

  @Override
  public final void onRejected(AdmissionTicket t, RejectReason reason, long nowNanos) {
    admissionDecided(reason);
  }

  /** Admission control admitted the request (at once, or from its queue). */
  public final void resumeAdmitted(long now) {
    A first = main;
    if (phase != Phase.ADMISSION || first == null) {
      // The client left while the request was queued.
      AdmissionTicket t = ticket;
      if (t != null && t.permit().isActive()) {
        t.permit().onIgnore(now);
      }
      return;
    }
    if (deadlines.isExhausted(expiresAtNanos, now)) {
      fail(Failure.DEADLINE, first, now);
      return;
    }
    moveTo(Phase.ATTEMPTING);
    AttemptPolicy p = policy();
    p.extraLoad().requestStarted();
    HedgePolicy h = p.hedge();
    if (h != null && mayHedge) {
      h.onRequest();
    }
    start(first, now);
    if (phase == Phase.ATTEMPTING && first.isLive()) {
      armHedge(p, now);
    }
  }

  /** Admission control shed the request (at once, or from its queue). */
  public final void resumeShed(RejectReason reason, long now) {
    if (phase != Phase.ADMISSION) {
      return;
    }
    shedReason = reason;
    fail(Failure.SHED, main, now);
  }

  /** A timer asked for through {@link #schedule} is due. */
  public final void onTimer(Timer timer, long now) {
    switch (timer) {
      case RETRY -> retryNow(now);
      case HEDGE -> hedgeNow(now);
    }
  }

  /** The attempt's request went to the origin (its latency counts from now). */
  public final void onSent(A attempt, long now) {
    if (attempt.state() == Attempt.State.CONNECTING) {
      attempt.sentNanos(now);
      attempt.moveTo(Attempt.State.SENT);
    }
  }

  /**
   * The origin's response head for {@code attempt}. Returns true when it wins (forward it; its
   * sibling is cancelled), false when it is discarded (read and drop it: a sibling may still answer
   * or a retry comes) or came too late.
   *
   * @param retryAfterNanos the response's {@code Retry-After} ({@link RetryAfter#parseNanos}), or
   *     {@link RetryAfter#ABSENT}
   */
  public final boolean onResponseHead(A attempt, int status, long retryAfterNanos, long now) {
    if (attempt.state() != Attempt.State.SENT || phase != Phase.ATTEMPTING) {
      return false;
    }
    AttemptPolicy p = attempt.policy();
    long latency = now - attempt.sentNanos();
    attempt.outcome(p.classifier().classifyResponse(status, latency, now));
    p.latency().record(latency, now);
    if (mayRetry && p.retryOn().statuses().contains(status)) {
      releaseSlot(attempt); // this attempt's budget place ends here, whatever comes next
      if (sibling(attempt) != null || retry(attempt, retryAfterNanos, now)) {
        end(attempt, attempt.outcome(), now, false);
        return false;
      }
    }
    win(attempt, now);
    return true;
  }

  /**
   * {@code attempt} failed before its response was complete.
   *
   * @param evidence what it says about the origin ({@link Outcome#TIMEOUT}, {@link
   *     Outcome#CONNECT_FAILURE}, {@link Outcome#MALFORMED_RESPONSE} …), or null when the failure
   *     was local (pool full, timed out before a connection) and says nothing about the origin
   */
  public final void onAttemptFailed(A attempt, @Nullable Outcome evidence, long now) {
    if (attempt.state() == Attempt.State.ENDED) {
      return;
    }
    boolean wasWinner = attempt.state() == Attempt.State.WON;
    end(attempt, evidence, now, false);
    if (phase.isOver()) {
      return;
    }
    if (wasWinner) {
      fail(Failure.TRUNCATED, attempt, now);
      return;
    }
    if (sibling(attempt) != null) {
      return; // the sibling may still answer
    }
    if (evidence != null
        && mayRetry
        && attempt.policy().retryOn().retries(evidence)
        && retry(attempt, RetryAfter.ABSENT, now)) {
      return;
    }
    fail(Failure.ATTEMPT_FAILED, attempt, now);
  }

  /** The winner's response was delivered whole: evidence first, then the request succeeds. */
  public final void onResponseComplete(A winner, long now) {
    if (winner.state() != Attempt.State.WON || phase != Phase.ANSWERING) {
      return;
    }
    end(winner, winner.outcome(), now, true);
    moveTo(Phase.SUCCEEDED);
    cancelTimer(Timer.RETRY);
    AdmissionTicket t = ticket;
    if (t != null && t.permit().isActive()) {
      if (winner.outcome().kind() == Outcome.Kind.SUCCESS) {
        t.permit().onSuccess(now);
      } else {
        t.permit().onIgnore(now); // see the class comment: origin trouble does not teach the limit
      }
    }
    finishExtraLoad();
    succeeded(winner, now);
  }

  /** The client went away: attempts stop with {@link Outcome#CLIENT_CANCELLED}. */
  public final void cancel(long now) {
    giveUp(Phase.CANCELLED, Outcome.CLIENT_CANCELLED, now);
  }

  /**
   * The driver gives up for a reason of its own (the client's request body turned out malformed):
   * attempts stop as local rejections, the request fails without {@link #failed} being called.
   */
  public final void abort(long now) {
    giveUp(Phase.FAILED, Outcome.LOCAL_REJECTION, now);
  }

  private void giveUp(Phase terminal, Outcome ifReached, long now) {
    if (phase.isOver()) {
      return;
    }
    Phase before = phase;
    moveTo(terminal);
    stopAll(ifReached, now);
    releaseHolds(before, now);
  }

  // ---------------------------------------------------------------------------------------------
  // What the driver may read

  public final Phase phase() {
    return phase;
  }

  /** Why admission control shed the request, for {@link Failure#SHED}. */
  public final @Nullable RejectReason shedReason() {
    return shedReason;
  }

  /** Attempts started so far, hedges included. */
  public final int attempts() {
    return attempts;
  }

  /** Hedges sent so far (0 or 1). */
  public final int hedges() {
    return hedges;
  }

  /** The winning attempt, once a response head was chosen. */
  public final @Nullable A winner() {
    return winner;
  }

  /** The request's current non-hedge attempt: the first, or the latest retry. */
  public final @Nullable A current() {
    return main;
  }

  /** What origin work may still use: the time left minus this hop's reserve. */
  public final long usableNanos(long now) {
    return deadlines.usableNanos(expiresAtNanos, now);
  }

  /** When the request's budget ends. */
  public final long expiresAtNanos() {
    return expiresAtNanos;
  }

  /** The admission ticket whose permit the request holds, or null without admission control. */
  public final @Nullable AdmissionTicket admissionTicket() {
    return ticket;
  }

  // ---------------------------------------------------------------------------------------------
  // The decisions

  private boolean acquire(A a, long now) {
    CircuitBreaker b = a.breaker();
    if (b == null) {
      return true;
    }
    Decision d = b.tryAcquire(a.permit().requestId(requestId), now);
    a.probe(d == Decision.PROBE);
    return d.isPermitted();
  }

  private void start(A a, long now) {
    long timeout = Math.max(1, Math.min(a.policy().attemptTimeoutNanos(), usableNanos(now)));
    a.timeoutNanos(timeout);
    a.moveTo(Attempt.State.CONNECTING);
    attempts++;
    startAttempt(a, now);
  }

  private void armHedge(AttemptPolicy p, long now) {
    if (!mayHedge || p.hedge() == null || overloaded()) {
      return;
    }
    long delay = p.hedgeDelayNanos(now);
    if (delay == HedgePolicy.NO_HEDGE || delay >= usableNanos(now) - deadlines.minUsefulNanos()) {
      return; // no trustworthy p95 yet, or a hedge could not finish in time
    }
    schedule(Timer.HEDGE, delay);
  }

  private void hedgeNow(long now) {
    A m = main;
    HedgePolicy h = policy().hedge();
    if (phase != Phase.ATTEMPTING || m == null || !m.isLive() || h == null || hedge != null) {
      return;
    }
    if (overloaded()) {
      hedgeDecided(HedgeDecision.OVERLOAD);
      return;
    }
    A candidate = pick(Attempt.Kind.HEDGE, m, now);
    BudgetSlot slot = hedgeSlot;
    if (slot == null) {
      slot = new BudgetSlot();
      hedgeSlot = slot;
    }
    HedgeDecision d = h.tryHedge(closed(m) && closed(candidate), hedges, slot);
    if (d.isHedge() && !acquire(candidate, now)) {
      slot.release();
      d = HedgeDecision.BREAKER_NOT_CLOSED;
    }
    hedgeDecided(d);
    if (!d.isHedge()) {
      return;
    }
    candidate.slot = slot;
    hedges++;
    hedge = candidate;
    start(candidate, now);
  }

  private static boolean closed(Attempt a) {
    CircuitBreaker b = a.breaker();
    return b == null || b.state() == State.CLOSED;
  }

  /** Decides a retry after {@code failed}; schedules it and returns true when it goes ahead. */
  private boolean retry(A failed, long retryAfterNanos, long now) {
    if (!mayRetry || phase != Phase.ATTEMPTING) {
      return false;
    }
    if (overloaded()) {
      retryDecided(RetryRefusal.OVERLOAD.code());
      return false;
    }
    BudgetSlot slot = retrySlot;
    if (slot == null) {
      slot = new BudgetSlot();
      retrySlot = slot;
    }
    RetryPolicy p = failed.policy().retry();
    long decision = p.decide(attempts, false, retryAfterNanos, usableNanos(now), slot);
    retryDecided(decision);
    if (!RetryPolicy.isRetry(decision)) {
      return false;
    }
    retryAfter = failed;
    schedule(Timer.RETRY, Math.max(1, decision));
    return true;
  }

  private void retryNow(long now) {
    BudgetSlot slot = retrySlot;
    A failed = retryAfter;
    retryAfter = null;
    if (phase != Phase.ATTEMPTING || slot == null || failed == null) {
      return; // over meanwhile: releaseHolds gave the budget place back
    }
    if (deadlines.isExhausted(expiresAtNanos, now)) {
      slot.release();
      fail(Failure.DEADLINE_BEFORE_RETRY, failed, now);
      return;
    }
    A next = pick(Attempt.Kind.RETRY, failed, now);
    if (!acquire(next, now)) {
      slot.release();
      fail(Failure.RETRY_BREAKER_OPEN, next, now);
      return;
    }
    next.slot = slot;
    main = next;
    start(next, now);
  }

  @SuppressWarnings("ReferenceEquality") // attempts are identities
  private void win(A a, long now) {
    a.moveTo(Attempt.State.WON);
    moveTo(Phase.ANSWERING);
    winner = a;
    cancelTimer(Timer.HEDGE);
    if (hedges > 0) {
      hedgeRaceEnded(a);
    }
    A other = a == main ? hedge : main;
    stop(other, Outcome.HEDGE_LOST, now);
  }

  @SuppressWarnings("ReferenceEquality") // attempts are identities
  private @Nullable A sibling(A a) {
    A o = a == main ? hedge : main;
    return o != null && o != a && o.isLive() ? o : null;
  }

  /** Ends {@code a} with the outcome its origin gets when it reached the origin, else unused. */
  private void stop(@Nullable A a, Outcome ifReached, long now) {
    if (a != null && a.state() != Attempt.State.ENDED) {
      end(a, a.reachedOrigin() ? ifReached : null, now, false);
    }
  }

  private void stopAll(Outcome ifReached, long now) {
    cancelTimer(Timer.HEDGE);
    cancelTimer(Timer.RETRY);
    stop(main, ifReached, now);
    stop(hedge, ifReached, now);
  }

  /**
   * The one place an attempt ends: evidence (or an unused permit), its budget place, its transport.
   */
  private void end(A a, @Nullable Outcome evidence, long now, boolean complete) {
    boolean started = a.isLive();
    long latency = a.reachedOrigin() ? now - a.sentNanos() : -1;
    a.moveTo(Attempt.State.ENDED);
    CircuitBreaker b = a.breaker();
    if (evidence == null) {
      if (b != null) {
        a.permit().release(now);
      }
    } else {
      recordEvidence(a, evidence, latency, now);
      if (b != null) {
        a.permit().onOutcome(evidence, now);
      }
    }
    releaseSlot(a);
    if (started) {
      releaseAttempt(a, complete);
    }
  }

  private static void releaseSlot(Attempt a) {
    BudgetSlot s = a.slot;
    if (s != null) {
      a.slot = null;
      s.release();
    }
  }

  private void fail(Failure failure, @Nullable A cause, long now) {
    Phase before = phase;
    moveTo(Phase.FAILED);
    stopAll(Outcome.LOCAL_REJECTION, now);
    releaseHolds(before, now);
    failed(failure, cause, now);
  }

  /**
   * Gives back what a request that did not succeed holds besides its attempts: its admission slot
   * (ignored as a sample, or its place in the queue) and its share of the extra-load budget.
   */
  private void releaseHolds(Phase before, long now) {
    AdmissionTicket t = ticket;
    AdmissionController ac = admission;
    if (t != null && ac != null) {
      if (t.permit().isActive()) {
        t.permit().onIgnore(now);
      } else if (before == Phase.ADMISSION && t.isQueued()) {
        ac.cancel(t);
      }
    }
    if (before == Phase.ATTEMPTING || before == Phase.ANSWERING) {
      finishExtraLoad();
    }
  }

  private void finishExtraLoad() {
    policy().extraLoad().requestFinished();
    BudgetSlot s = retrySlot;
    if (s != null && s.isHeld()) {
      s.release(); // a retry was due: its place was taken when it was decided
    }
  }

  private boolean overloaded() {
    AdmissionController ac = admission;
    return ac != null && ac.overloadLevel().disablesHedgesAndRetries();
  }

  private AttemptPolicy policy() {
    AttemptPolicy p = policy;
    if (p == null) {
      throw new IllegalStateException("sequence : " + phase + " (expected: begun)");
    }
    return p;
  }

  private void moveTo(Phase next) {
    if (!phase.mayMoveTo(next)) {
      throw new IllegalStateException(
          "sequence phase : " + phase + " -> " + next + " (expected: a legal transition)");
    }
    phase = next;
  }

  private static RejectReason reason(@Nullable RejectReason r) {
    return r == null ? RejectReason.LIMIT_REACHED : r;
  }
}
