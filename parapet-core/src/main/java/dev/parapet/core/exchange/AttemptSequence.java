package dev.parapet.core.exchange;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.admission.AdmissionListener;
import dev.parapet.core.admission.AdmissionTicket;
import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.State;
import dev.parapet.core.deadline.DeadlinePolicy;
import dev.parapet.core.fleet.FleetLimiter;
import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.retry.BudgetSlot;
import dev.parapet.core.retry.RetryAfter;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.retry.RetryRefusal;
import dev.parapet.core.retry.UpstreamCapacity;
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
 *          fleet ceiling: a token for the origin? ─no─► FLEET_LIMIT (retries too; a hedge is skipped)
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
 * one hedge per request, of its first attempt, never while a breaker is not CLOSED or the overload
 * manager says no. Admission learns only from healthy answers: a failing origin is its breaker's
 * business, and letting its latency shrink the listener-wide limit would starve healthy routes.
 *
 * <p>The subclass is the driver ({@link ExchangeHooks}: hosts, bytes, timers, answers) and reports
 * what happened through the {@code on…} methods, all on its one thread — except {@link
 * #onAdmitted}/{@link #onRejected}, called from whichever thread freed an admission slot, which
 * only tell the driver ({@link #admissionDecided}) to hop back and call {@link #resumeAdmission}.
 * Time is always passed in.
 *
 * @param <A> the driver's attempt type
 */
public abstract class AttemptSequence<A extends Attempt> extends ExchangeHooks<A>
    implements AdmissionListener {
  // One sequence per request, millions at once in a simulation: small counts are bytes.
  private final long requestId;
  private final long expiresAtNanos;
  private final DeadlinePolicy deadlines;
  private final @Nullable AdmissionController admission;
  private @Nullable AdmissionTicket ticket;
  private final byte priority;
  private final RequestKind requestKind;
  private final boolean mayRetry;
  private final boolean mayHedge;

  private ExchangePhase phase = ExchangePhase.NEW;
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
  private byte hedges;

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
    if (priority < 1 || priority > 4) {
      throw new IllegalArgumentException("priority : " + priority + " (expected: in [1, 4])");
    }
    this.priority = (byte) priority;
    this.requestKind = requestKind;
    this.mayRetry = mayRetry;
    this.mayHedge = mayHedge && mayRetry;
  }

  // ---------------------------------------------------------------------------------------------
  // What the driver reports

  /**
   * The admission partition (a route's guaranteed share of the limit) this request counts against;
   * -1, the default, for none.
   */
  protected int admissionPartition() {
    return -1;
  }

  /** Runs the gate: pick, breaker (then the fallback's), admission, deadline, first attempt. */
  public final void begin(long now) {
    A first = pick(Attempt.Kind.FIRST, null, now);
    if (!acquire(first, now)) {
      A alternative = fallback(first, now);
      if (alternative == null || !acquire(alternative, now)) {
        moveTo(ExchangePhase.FAILED);
        failed(ExchangeFailure.BREAKER_OPEN, first, now);
        return;
      }
      first = alternative;
    }
    main = first;
    policy = first.policy();
    moveTo(ExchangePhase.ADMISSION);
    AdmissionController ac = admission;
    if (ac == null) {
      resumeAdmitted(now);
      return;
    }
    AdmissionTicket t = new AdmissionTicket(this).partition(admissionPartition());
    ticket = t;
    switch (ac.offer(t, priority, requestKind, now)) {
      case ADMITTED -> resumeAdmitted(now);
      case QUEUED -> {} // onAdmitted or onRejected comes, exactly once
      case REJECTED -> {
        RejectReason r = t.rejectReason();
        resumeShed(r == null ? RejectReason.LIMIT_REACHED : r, now);
      }
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

  /**
   * Admission control decided about a queued request (told through {@link #admissionDecided}):
   * admitted when {@code shed} is null, shed for that reason otherwise. Called on the driver's
   * thread.
   */
  public final void resumeAdmission(@Nullable RejectReason shed, long now) {
    if (shed == null) {
      resumeAdmitted(now);
    } else {
      resumeShed(shed, now);
    }
  }

  /** Admission control admitted the request (at once, or from its queue). */
  private void resumeAdmitted(long now) {
    A first = main;
    if (phase != ExchangePhase.ADMISSION || first == null) {
      // The client left while the request was queued.
      AdmissionTicket t = ticket;
      AdmissionController ac = admission;
      if (t != null && ac != null && t.permit().isActive()) {
        ac.complete(t, false, now);
      }
      return;
    }
    if (deadlines.isExhausted(expiresAtNanos, now)) {
      fail(ExchangeFailure.DEADLINE, first, now);
      return;
    }
    if (!token(first, now)) {
      fail(ExchangeFailure.FLEET_LIMIT, first, now);
      return;
    }
    moveTo(ExchangePhase.ATTEMPTING);
    AttemptPolicy p = policy();
    p.extraLoad().requestStarted();
    UpstreamCapacity cap = p.capacity();
    if (cap != null) {
      cap.requestStarted(now);
    }
    HedgePolicy h = p.hedge();
    if (h != null && mayHedge) {
      h.onRequest();
    }
    start(first, now);
    if (phase == ExchangePhase.ATTEMPTING && first.isLive()) {
      armHedge(p, now);
    }
  }

  /** Admission control shed the request (at once, or from its queue). */
  private void resumeShed(RejectReason reason, long now) {
    if (phase != ExchangePhase.ADMISSION) {
      return;
    }
    shedReason = reason;
    fail(ExchangeFailure.SHED, main, now);
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
    if (attempt.state() != Attempt.State.SENT || phase != ExchangePhase.ATTEMPTING) {
      return false;
    }
    AttemptPolicy p = attempt.policy();
    long latency = now - attempt.sentNanos();
    attempt.outcome(p.classifier().classifyResponse(status, latency, now));
    RollingLatencyHistogram histogram = p.latency();
    if (histogram != null) {
      histogram.record(latency, now);
    }
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
      fail(ExchangeFailure.TRUNCATED, attempt, now);
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
    fail(ExchangeFailure.ATTEMPT_FAILED, attempt, now);
  }

  /** The winner's response was delivered whole: evidence first, then the request succeeds. */
  public final void onResponseComplete(A winner, long now) {
    if (winner.state() != Attempt.State.WON || phase != ExchangePhase.ANSWERING) {
      return;
    }
    end(winner, winner.outcome(), now, true);
    moveTo(ExchangePhase.SUCCEEDED);
    cancelTimer(Timer.RETRY);
    AdmissionTicket t = ticket;
    AdmissionController ac = admission;
    if (t != null && ac != null && t.permit().isActive()) {
      // Only successes teach the limit; see the class comment: origin trouble does not.
      ac.complete(t, winner.outcome().kind() == Outcome.Kind.SUCCESS, now);
    }
    finishExtraLoad();
    succeeded(winner, now);
  }

  /** The client went away: attempts stop with {@link Outcome#CLIENT_CANCELLED}. */
  public final void cancel(long now) {
    giveUp(ExchangePhase.CANCELLED, Outcome.CLIENT_CANCELLED, now);
  }

  /**
   * The driver gives up for a reason of its own (the client's request body turned out malformed):
   * attempts stop as local rejections, the request fails without {@link #failed} being called.
   */
  public final void abort(long now) {
    giveUp(ExchangePhase.FAILED, Outcome.LOCAL_REJECTION, now);
  }

  private void giveUp(ExchangePhase terminal, Outcome ifReached, long now) {
    if (phase.isOver()) {
      return;
    }
    ExchangePhase before = phase;
    moveTo(terminal);
    stopAll(ifReached, now);
    releaseHolds(before, now);
  }

  // ---------------------------------------------------------------------------------------------
  // What the driver may read

  public final ExchangePhase phase() {
    return phase;
  }

  /** Why admission control shed the request, for {@link ExchangeFailure#SHED}. */
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

  /** When the request's budget ends (ticker nanos), as given to the constructor. */
  public final long expiresAtNanos() {
    return expiresAtNanos;
  }

  /** What origin work may still use: the time left minus this hop's reserve. */
  public final long usableNanos(long now) {
    return deadlines.usableNanos(expiresAtNanos, now);
  }

  // ---------------------------------------------------------------------------------------------
  // The decisions

  private boolean acquire(A a, long now) {
    CircuitBreaker b = a.breaker();
    if (b == null) {
      return true;
    }
    a.requestId(requestId);
    return b.tryAcquire(a, now).isPermitted();
  }

  /** Takes a token of the attempt's origin's fleet-wide ceiling, if it has one; never waits. */
  private static boolean token(Attempt a, long now) {
    FleetLimiter f = a.policy().fleetLimit();
    return f == null || f.tryAcquire(now);
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
    if (phase != ExchangePhase.ATTEMPTING
        || m == null
        || m.kind() != Attempt.Kind.FIRST
        || !m.isLive()
        || h == null
        || hedge != null) {
      return;
    }
    if (overloaded()) {
      hedgeDecided(HedgeDecision.OVERLOAD);
      return;
    }
    UpstreamCapacity cap = m.policy().capacity();
    if (cap != null && !cap.tryExtra(now)) {
      hedgeDecided(HedgeDecision.UPSTREAM_DEGRADED);
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
    } else if (d.isHedge() && !token(candidate, now)) {
      end(candidate, null, now, false); // gives its breaker permit back unused
      slot.release();
      d = HedgeDecision.FLEET_LIMIT;
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
    if (!mayRetry || phase != ExchangePhase.ATTEMPTING) {
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
    UpstreamCapacity cap = failed.policy().capacity();
    if (RetryPolicy.isRetry(decision) && cap != null && !cap.tryExtra(now)) {
      slot.release(); // the budget's place goes back: this retry is not made
      decision = RetryRefusal.UPSTREAM_DEGRADED.code();
    }
    retryDecided(decision);
    if (!RetryPolicy.isRetry(decision)) {
      return false;
    }
    retryAfter = failed;
    cancelTimer(Timer.HEDGE); // only a first attempt is hedged, never the retry that replaces it
    schedule(Timer.RETRY, Math.max(1, decision));
    return true;
  }

  private void retryNow(long now) {
    BudgetSlot slot = retrySlot;
    A failed = retryAfter;
    retryAfter = null;
    if (phase != ExchangePhase.ATTEMPTING || slot == null || failed == null) {
      return; // over meanwhile: releaseHolds gave the budget place back
    }
    if (deadlines.isExhausted(expiresAtNanos, now)) {
      slot.release();
      fail(ExchangeFailure.DEADLINE_BEFORE_RETRY, failed, now);
      return;
    }
    A next = pick(Attempt.Kind.RETRY, failed, now);
    if (!acquire(next, now)) {
      slot.release();
      fail(ExchangeFailure.RETRY_BREAKER_OPEN, next, now);
      return;
    }
    if (!token(next, now)) {
      end(next, null, now, false); // gives its breaker permit back unused
      slot.release();
      fail(ExchangeFailure.FLEET_LIMIT, next, now);
      return;
    }
    next.slot = slot;
    main = next;
    start(next, now);
  }

  @SuppressWarnings("ReferenceEquality") // attempts are identities
  private void win(A a, long now) {
    a.moveTo(Attempt.State.WON);
    moveTo(ExchangePhase.ANSWERING);
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
    if (evidence != null) {
      recordEvidence(a, evidence, latency, now);
    }
    if (a.breaker() != null) {
      a.completePermit(evidence, now);
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

  private void fail(ExchangeFailure failure, @Nullable A cause, long now) {
    ExchangePhase before = phase;
    moveTo(ExchangePhase.FAILED);
    stopAll(Outcome.LOCAL_REJECTION, now);
    releaseHolds(before, now);
    failed(failure, cause, now);
  }

  /**
   * Gives back what a request that did not succeed holds besides its attempts: its admission slot
   * (ignored as a sample, or its place in the queue) and its share of the extra-load budget.
   */
  private void releaseHolds(ExchangePhase before, long now) {
    AdmissionTicket t = ticket;
    AdmissionController ac = admission;
    if (t != null && ac != null) {
      if (t.permit().isActive()) {
        ac.complete(t, false, now);
      } else if (before == ExchangePhase.ADMISSION && t.isQueued()) {
        ac.cancel(t);
      }
    }
    if (before == ExchangePhase.ATTEMPTING || before == ExchangePhase.ANSWERING) {
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

  private void moveTo(ExchangePhase next) {
    if (!phase.mayMoveTo(next)) {
      throw new IllegalStateException(
          "sequence phase : " + phase + " -> " + next + " (expected: a legal transition)");
    }
    phase = next;
  }
}
