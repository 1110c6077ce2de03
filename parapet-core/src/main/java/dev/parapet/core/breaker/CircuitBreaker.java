package dev.parapet.core.breaker;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.window.OutcomeWindow;
import dev.parapet.core.window.RecentEvents;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * A circuit breaker for one origin scope, as the seeds ask for it: weighted failures, a slow-call
 * rate, a connect-failure fast trip, jittered exponential backoff, staggered probes, a traffic
 * ramp, shadow mode and a transition event for every change.
 *
 * <p>How it works. The state is one immutable {@link Snapshot} in a volatile field; a change is a
 * compare-and-set from the snapshot it was computed from, and only the winner emits the event
 * (Armeria's non-blocking breaker does the same). The CLOSED path is one volatile read plus arming
 * the caller's permit (a {@link Permit}, or an object of its own that extends {@link
 * AbstractPermit}): no allocation, no lock, no shared write. Completing a permit records the
 * outcome in the {@link OutcomeWindow} (one atomic add); only failures and slow calls evaluate the
 * trip rules, so a healthy origin costs almost nothing.
 *
 * <ul>
 *   <li>CLOSED → OPEN when the window holds {@code >= minRequests} calls and {@code (failures +
 *       slowWeight × slow) / calls >= failureRate}, or {@code slow / calls >= slowRate}; or when
 *       {@code connectFailures} connect failures happen within their span, at any volume (seed
 *       004).
 *   <li>OPEN for {@code min(base × 2^level, max)} × (1 ± jitter), where {@code level} counts
 *       consecutive re-opens (seed 000: "30s, 60s, 120s, capped at 5 minutes ... that jitter and
 *       backoff is critical; without it, 200 PoPs all probing at the same second").
 *   <li>HALF_OPEN: the first call after the open time is the first probe; then at most {@code
 *       probes} probes, never two in flight, at least {@code spacing} apart; {@code required} of
 *       them succeeding under {@code maxLatency} moves on; any failing probe re-opens at once with
 *       a longer backoff (seed 000: "exactly three probe requests ... staggered — one every 500ms.
 *       If two of three succeed within our latency SLO, we close. If any probe times out, we reopen
 *       immediately").
 *   <li>RAMPING admits a share of calls growing linearly from {@code rampFrom} to 100 % over {@code
 *       rampOver} (seed 001: "allow 5% of traffic through, then ramp"), chosen by a deterministic
 *       counter rather than a coin so the share is exact; it watches a fresh window and trips back
 *       to OPEN like CLOSED does. A completed ramp closes and resets the backoff.
 * </ul>
 *
 * <p>Evidence from a call admitted before the breaker last opened is stale and dropped (each
 * opening starts a new epoch). Shadow mode runs the same state machine and emits the same events,
 * but admits every call; calls it would have rejected are not evidence, exactly as if they had been
 * rejected.
 */
public final class CircuitBreaker {
  /** Minimum interval between writes of {@link #lastActiveNanos} (one write per second at most). */
  private static final long ACTIVITY_RESOLUTION_NANOS = 1_000_000_000L;

  private static final int MAX_LEVEL = 32;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(CircuitBreaker.class, "state", Snapshot.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final BreakerKey key;
  private final String keyText;
  private final BreakerPolicy policy;
  private final OutcomeWindow window;
  private final @Nullable RecentEvents connectFailures;
  private final RecentEvents opens;
  private final RandomSource random;
  private final BreakerListener listener;
  private volatile Snapshot state;
  private final AtomicLong rampCounter = new AtomicLong();
  private volatile Mode mode;
  private volatile boolean flapping;
  private volatile long lastActiveNanos;

  private final LongAdder rejected = new LongAdder();
  private final LongAdder shadowRejected = new LongAdder();
  private final LongAdder misuse = new LongAdder();
  private final LongAdder staleEvidence = new LongAdder();
  private final LongAdder probesSent = new LongAdder();
  private final LongAdder transitions = new LongAdder();
  private final LongAdder listenerErrors = new LongAdder();

  /**
   * A breaker for {@code key}, closed at {@code nowNanos}.
   *
   * @param random jitter source (use {@link RandomSource#seeded} in tests and simulations)
   * @param listener receives transition and flapping events
   */
  public CircuitBreaker(
      BreakerKey key,
      BreakerPolicy policy,
      RandomSource random,
      BreakerListener listener,
      long nowNanos) {
    this.key = Objects.requireNonNull(key, "key");
    this.keyText = key.toString();
    this.policy = Objects.requireNonNull(policy, "policy");
    this.random = Objects.requireNonNull(random, "random");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.window = policy.newWindow(nowNanos);
    this.connectFailures =
        policy.connectFailures == 0
            ? null
            : new RecentEvents(policy.connectFailures, policy.connectFailuresWithin);
    this.opens = new RecentEvents(policy.flappingOpens + 1, policy.flappingWithin);
    this.mode = policy.mode;
    this.lastActiveNanos = nowNanos;
    this.state = Snapshot.closed(nowNanos, 0);
  }

  // ---------------------------------------------------------------------------------------------
  // Admission

  /**
   * Decides whether a call may go to the origin at {@code nowNanos}. When the decision {@link
   * Decision#isPermitted() is permitted}, {@code permit} is armed and must be completed exactly
   * once; otherwise it is left untouched.
   */
  public Decision tryAcquire(AbstractPermit permit, long nowNanos) {
    Snapshot s = state;
    if (s.state == State.CLOSED) {
      touch(nowNanos);
      permit.arm(this, AbstractPermit.NORMAL, s.epoch, nowNanos);
      return Decision.PERMITTED;
    }
    return acquireSlow(permit, s, nowNanos, false);
  }

  /**
   * Convenience for callers that do not keep permits: allocates one per admitted call.
   *
   * @return the armed permit, or null when the call is rejected
   */
  public @Nullable Permit tryAcquire(long nowNanos) {
    Permit p = new Permit();
    return tryAcquire(p, nowNanos).isPermitted() ? p : null;
  }

  /**
   * For a synthetic prober ({@link ProbeMode#SYNTHETIC}, or an operator's check in any mode): takes
   * a probe permit if one is due now. Returns {@link Decision#PROBE} with the permit armed, a
   * rejection while the next probe is not due, or {@link Decision#NO_PROBE_DUE} when the breaker is
   * not probing at all.
   */
  public Decision tryAcquireProbe(AbstractPermit permit, long nowNanos) {
    Snapshot s = state;
    if (s.state != State.OPEN && s.state != State.HALF_OPEN) {
      return Decision.NO_PROBE_DUE;
    }
    Decision d = acquireSlow(permit, s, nowNanos, true);
    return d == Decision.SHADOW_PERMITTED ? Decision.NO_PROBE_DUE : d;
  }

  private Decision acquireSlow(AbstractPermit permit, Snapshot s, long now, boolean prober) {
    for (; ; ) {
      switch (s.state) {
        case CLOSED -> {
          if (prober) {
            return Decision.NO_PROBE_DUE;
          }
          touch(now);
          permit.arm(this, AbstractPermit.NORMAL, s.epoch, now);
          return Decision.PERMITTED;
        }
        case DISABLED -> {
          if (prober) {
            return Decision.NO_PROBE_DUE;
          }
          permit.arm(this, AbstractPermit.UNTRACKED, s.epoch, now);
          return Decision.PERMITTED;
        }
        case FORCED_OPEN -> {
          return prober
              ? Decision.NO_PROBE_DUE
              : reject(permit, s, Decision.REJECTED_FORCED_OPEN, now, false);
        }
        case OPEN -> {
          if (now - s.openUntilNanos < 0 || !mayProbe(prober)) {
            return reject(permit, s, Decision.REJECTED_OPEN, now, prober);
          }
          Snapshot next = s.halfOpenWithFirstProbe(now);
          if (transition(s, next, Reason.BACKOFF_ELAPSED, now, permit.requestId(), 0)) {
            return admitProbe(permit, next, now);
          }
        }
        case HALF_OPEN -> {
          if (!mayProbe(prober)) {
            return reject(permit, s, Decision.REJECTED_HALF_OPEN, now, prober);
          }
          if (s.probeInFlight) {
            if (now - s.lastProbeNanos >= policy.probeTimeoutNanos) {
              // The probe was lost or hangs beyond any sane attempt timeout: a failed probe.
              reopen(s, Reason.PROBE_TIMED_OUT, now, permit.requestId());
            } else {
              return reject(permit, s, Decision.REJECTED_HALF_OPEN, now, prober);
            }
          } else if (s.probesIssued >= policy.probes
              || now - s.lastProbeNanos < policy.probeSpacingNanos) {
            return reject(permit, s, Decision.REJECTED_HALF_OPEN, now, prober);
          } else {
            Snapshot next = s.withProbeIssued(now);
            if (casState(s, next)) {
              return admitProbe(permit, next, now);
            }
          }
        }
        case RAMPING -> {
          if (prober) {
            return Decision.NO_PROBE_DUE;
          }
          long elapsed = now - s.sinceNanos;
          if (elapsed >= policy.rampOverNanos) {
            transition(s, Snapshot.closed(now, s.epoch), Reason.RAMP_COMPLETE, now, 0, 0);
          } else if (rampAdmits(Math.max(0L, elapsed))) {
            touch(now);
            permit.arm(this, AbstractPermit.NORMAL, s.epoch, now);
            return Decision.PERMITTED;
          } else {
            return reject(permit, s, Decision.REJECTED_RAMPING, now, prober);
          }
        }
      }
      s = state;
    }
  }

  private boolean mayProbe(boolean prober) {
    return prober || policy.probeMode == ProbeMode.LIVE;
  }

  private Decision admitProbe(AbstractPermit permit, Snapshot s, long now) {
    probesSent.increment();
    permit.arm(this, AbstractPermit.PROBE, s.epoch, now);
    return Decision.PROBE;
  }

  /**
   * Admits call number n of the ramp when the admitted share crosses an integer: over any run of
   * calls, the admitted count is within one of {@code share × calls}.
   */
  private boolean rampAdmits(long elapsedNanos) {
    double share =
        policy.rampFrom + (1.0 - policy.rampFrom) * ((double) elapsedNanos / policy.rampOverNanos);
    long n = rampCounter.getAndIncrement();
    return Math.floor((n + 1) * share) > Math.floor(n * share);
  }

  private Decision reject(
      AbstractPermit permit, Snapshot s, Decision decision, long now, boolean prober) {
    if (mode == Mode.SHADOW && !prober) {
      shadowRejected.increment();
      permit.armShadow(this, decision, s.epoch, now);
      return Decision.SHADOW_PERMITTED;
    }
    rejected.increment();
    return decision;
  }

  private void touch(long now) {
    if (now - lastActiveNanos > ACTIVITY_RESOLUTION_NANOS) {
      lastActiveNanos = now;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Completion (called by the permit after its compare-and-set)

  void complete(AbstractPermit p, Outcome outcome, long now) {
    switch (p.kind) {
      case AbstractPermit.NORMAL -> completeNormal(p, outcome, now);
      case AbstractPermit.PROBE -> completeProbe(p, outcome, now);
      default -> {
        // SHADOW (would have been rejected) and UNTRACKED (disabled) are not evidence.
      }
    }
  }

  private void completeNormal(AbstractPermit p, Outcome outcome, long now) {
    Outcome.Kind kind = outcome.kind();
    if (kind == Outcome.Kind.IGNORED) {
      return;
    }
    Snapshot s = state;
    if (p.epoch != s.epoch) {
      staleEvidence.increment();
      return;
    }
    window.record(kind, now);
    if (kind == Outcome.Kind.SUCCESS) {
      return;
    }
    RecentEvents burst = connectFailures;
    boolean fastTrip = outcome == Outcome.CONNECT_FAILURE && burst != null && burst.record(now);
    if (s.state != State.CLOSED && s.state != State.RAMPING) {
      return;
    }
    Reason reason = fastTrip ? Reason.CONNECT_FAILURES : tripReason(now);
    if (reason != null) {
      reopen(s, reason, now, p.requestId());
    }
  }

  private @Nullable Reason tripReason(long now) {
    long calls = window.calls(now);
    if (calls < policy.minRequests) {
      return null;
    }
    long failures = window.failures(now);
    long slow = window.slowCalls(now);
    if (failures + policy.slowWeight * slow >= policy.failureRate * calls) {
      return Reason.FAILURE_RATE;
    }
    if (slow >= policy.slowRate * calls) {
      return Reason.SLOW_RATE;
    }
    return null;
  }

  private void completeProbe(AbstractPermit p, Outcome outcome, long now) {
    for (; ; ) {
      Snapshot s = state;
      if (s.state != State.HALF_OPEN || s.epoch != p.epoch || !s.probeInFlight) {
        staleEvidence.increment();
        return;
      }
      Outcome.Kind kind = outcome.kind();
      if (kind == Outcome.Kind.FAILURE) {
        if (reopen(s, Reason.PROBE_FAILED, now, p.requestId())) {
          return;
        }
        continue;
      }
      if (kind == Outcome.Kind.IGNORED) {
        if (casState(s, s.withProbeReturned())) {
          return;
        }
        continue;
      }
      boolean ok = now - p.startNanos <= policy.probeMaxLatencyNanos;
      Snapshot done = s.withProbeDone(ok);
      int remaining = policy.probes - done.probesIssued;
      if (done.probesSucceeded >= policy.probesRequired) {
        Snapshot next =
            policy.rampOverNanos == 0 || policy.rampFrom >= 1.0
                ? Snapshot.closed(now, s.epoch)
                : Snapshot.ramping(now, s.epoch, s.level);
        if (next.state == State.RAMPING) {
          // Fresh evidence for the ramp; installed before the state so ramp calls land in it.
          window.reset(now);
          rampCounter.set(0);
          RecentEvents burst = connectFailures;
          if (burst != null) {
            burst.reset();
          }
        }
        if (transition(s, next, Reason.PROBES_PASSED, now, p.requestId(), done.probesIssued)) {
          if (next.state == State.CLOSED) {
            window.reset(now);
          }
          return;
        }
      } else if (done.probesSucceeded + remaining < policy.probesRequired) {
        if (reopen(s, Reason.PROBES_TOO_SLOW, now, p.requestId())) {
          return;
        }
      } else if (casState(s, done)) {
        return;
      }
    }
  }

  /**
   * Moves from {@code s} (CLOSED, HALF_OPEN or RAMPING) to OPEN with the next backoff level.
   *
   * @return true if this thread made the change, false if {@code s} was no longer current
   */
  private boolean reopen(Snapshot s, Reason reason, long now, long requestId) {
    int level = s.state == State.CLOSED ? 0 : Math.min(s.level + 1, MAX_LEVEL);
    long openNanos = openNanos(level);
    Snapshot next = Snapshot.open(now, s.epoch + 1, level, now + openNanos);
    return transition(s, next, reason, now, requestId, s.probesIssued, openNanos);
  }

  /** {@code min(base × 2^level, max)}, then jittered by ±jitter. */
  long openNanos(int level) {
    long base = policy.openBaseNanos;
    long max = policy.openMaxNanos;
    long d = level >= 62 || base > (max >> level) ? max : Math.min(base << level, max);
    double j = policy.openJitter;
    if (j == 0.0) {
      return d;
    }
    double factor = 1.0 + j * (2.0 * random.nextDouble() - 1.0);
    return Math.max(1L, (long) (d * factor));
  }

  private boolean transition(
      Snapshot from, Snapshot to, Reason reason, long now, long id, int probes) {
    return transition(from, to, reason, now, id, probes, 0L);
  }

  private boolean transition(
      Snapshot from, Snapshot to, Reason reason, long now, long id, int probes, long openNanos) {
    Transition.of(from.state, to.state); // throws on an illegal move: a bug, never a user error
    if (!casState(from, to)) {
      return false;
    }
    transitions.increment();
    OutcomeWindow.Reading r = window.read(now);
    emit(
        new TransitionEvent(
            key,
            from.state,
            to.state,
            reason,
            r.calls(),
            r.weightedFailureRate(policy.slowWeight),
            r.slowRate(),
            probes,
            openNanos,
            now,
            id));
    if (to.state == State.OPEN || to.state == State.FORCED_OPEN) {
      onOpened(now);
    }
    return true;
  }

  private void onOpened(long now) {
    boolean over = opens.record(now);
    if (over && !flapping) {
      flapping = true;
      try {
        listener.onFlapping(
            new FlappingEvent(key, opens.recent(now), policy.flappingWithin.toNanos(), now));
      } catch (RuntimeException e) {
        listenerErrors.increment();
      }
    } else if (!over) {
      flapping = false;
    }
  }

  private void emit(TransitionEvent e) {
    try {
      listener.onTransition(e);
    } catch (RuntimeException ex) {
      listenerErrors.increment();
    }
  }

  private boolean casState(Snapshot expected, Snapshot next) {
    return STATE.compareAndSet(this, expected, next);
  }

  void countMisuse() {
    misuse.increment();
  }

  /**
   * Active health checks (seed 004: "your breaker shouldn't rely on passive traffic alone") found
   * every host this breaker protects down: a CLOSED or RAMPING breaker opens at once, with the next
   * backoff level, instead of waiting for live failures to fill its window. Any other state is left
   * alone (probes decide in HALF_OPEN; operators' states are theirs).
   *
   * @return true if this call opened the breaker
   */
  public boolean openOnHealthCheck(long nowNanos) {
    for (; ; ) {
      Snapshot s = state;
      if (s.state != State.CLOSED && s.state != State.RAMPING) {
        return false;
      }
      if (reopen(s, Reason.HEALTH_CHECK_FAILED, nowNanos, 0L)) {
        return true;
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Operators

  /** Holds the breaker open until {@link #close} (admin API). */
  public void forceOpen(long nowNanos) {
    operatorMove(State.FORCED_OPEN, Reason.FORCED_OPEN, nowNanos);
  }

  /** Closes the breaker from any state and forgets its evidence and backoff (admin API). */
  public void close(long nowNanos) {
    operatorMove(State.CLOSED, Reason.FORCED_CLOSED, nowNanos);
  }

  /** Admits everything and records nothing until {@link #close} (admin API). */
  public void disable(long nowNanos) {
    operatorMove(State.DISABLED, Reason.DISABLED, nowNanos);
  }

  /**
   * Closes the breaker and forgets everything it knew: evidence, backoff and flapping history.
   * Unlike {@link #close} this emits no event when the breaker was already closed.
   */
  public void reset(long nowNanos) {
    operatorMove(State.CLOSED, Reason.FORCED_CLOSED, nowNanos);
    opens.reset();
    flapping = false;
    window.reset(nowNanos);
    RecentEvents burst = connectFailures;
    if (burst != null) {
      burst.reset();
    }
  }

  private void operatorMove(State to, Reason reason, long now) {
    for (; ; ) {
      Snapshot s = state;
      if (s.state == to) {
        return;
      }
      Snapshot next =
          switch (to) {
            case CLOSED -> Snapshot.closed(now, s.epoch + 1);
            case FORCED_OPEN -> Snapshot.simple(State.FORCED_OPEN, now, s.epoch + 1);
            case DISABLED -> Snapshot.simple(State.DISABLED, now, s.epoch + 1);
            default ->
                throw new IllegalArgumentException("to : " + to + " (expected: operator state)");
          };
      if (to == State.CLOSED) {
        window.reset(now);
        RecentEvents burst = connectFailures;
        if (burst != null) {
          burst.reset();
        }
      }
      if (transition(s, next, reason, now, 0, 0)) {
        return;
      }
    }
  }

  /** Switches between enforcing and shadow mode; takes effect for the next decision. */
  public void mode(Mode mode) {
    this.mode = Objects.requireNonNull(mode, "mode");
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  /** This breaker's key. */
  public BreakerKey key() {
    return key;
  }

  /**
   * This breaker's key as text ({@link BreakerKey#toString}), made once: it names the breaker in
   * every answer the breaker refuses, at the highest rates a proxy answers.
   */
  public String keyText() {
    return keyText;
  }

  /** Its policy. */
  public BreakerPolicy policy() {
    return policy;
  }

  /** Its current state (the RAMPING → CLOSED move happens on the next admission after the ramp). */
  public State state() {
    return state.state;
  }

  /** Enforce or shadow. */
  public Mode mode() {
    return mode;
  }

  /**
   * How long a caller should wait before trying again, for {@code Retry-After}: the remaining open
   * time while OPEN; the time until the next probe may go while HALF_OPEN; 0 otherwise (the caller
   * picks its configured value, for example while FORCED_OPEN).
   */
  public long retryAfterNanos(long nowNanos) {
    Snapshot s = state;
    return switch (s.state) {
      case OPEN -> Math.max(0L, s.openUntilNanos - nowNanos);
      case HALF_OPEN -> Math.max(0L, s.lastProbeNanos + policy.probeSpacingNanos - nowNanos);
      default -> 0L;
    };
  }

  /**
   * For a synthetic prober: nanoseconds until a probe may be taken (0 = now), or -1 when the
   * breaker is not probing or a probe is in flight.
   */
  public long nanosUntilProbe(long nowNanos) {
    Snapshot s = state;
    if (s.state == State.OPEN) {
      return Math.max(0L, s.openUntilNanos - nowNanos);
    }
    if (s.state == State.HALF_OPEN && !s.probeInFlight && s.probesIssued < policy.probes) {
      return Math.max(0L, s.lastProbeNanos + policy.probeSpacingNanos - nowNanos);
    }
    return -1L;
  }

  /** Ticker reading of the last admission (at one-second resolution) or state change. */
  public long lastActiveNanos() {
    long active = lastActiveNanos;
    long since = state.sinceNanos;
    return since - active > 0 ? since : active;
  }

  /** True after the flapping threshold was crossed, until the open rate falls back under it. */
  public boolean isFlapping() {
    return flapping;
  }

  /** Completions after the first (each a no-op). */
  public long misuseCount() {
    return misuse.sum();
  }

  /** Calls rejected while enforcing. */
  public long rejectedCount() {
    return rejected.sum();
  }

  /** Calls that shadow mode admitted but enforcing would have rejected. */
  public long shadowRejectedCount() {
    return shadowRejected.sum();
  }

  /** Outcomes dropped because their call was admitted before the breaker last opened. */
  public long staleEvidenceCount() {
    return staleEvidence.sum();
  }

  /** Probes admitted (live or synthetic). */
  public long probesSentCount() {
    return probesSent.sum();
  }

  /** State changes so far. */
  public long transitionCount() {
    return transitions.sum();
  }

  /** Exceptions thrown by the listener (swallowed). */
  public long listenerErrorCount() {
    return listenerErrors.sum();
  }

  /** A point-in-time view for the admin API and dashboards (allocates). */
  public BreakerSnapshot snapshot(long nowNanos) {
    Snapshot s = state;
    OutcomeWindow.Reading r = window.read(nowNanos);
    return new BreakerSnapshot(
        key,
        s.state,
        mode,
        r.calls(),
        r.weightedFailureRate(policy.slowWeight),
        r.slowRate(),
        s.state == State.OPEN ? Math.max(0L, s.openUntilNanos - nowNanos) : 0L,
        s.level,
        s.probesIssued,
        s.probesSucceeded,
        flapping,
        rejectedCount(),
        shadowRejectedCount(),
        transitionCount(),
        misuseCount());
  }

  @Override
  public String toString() {
    return "CircuitBreaker{" + key + ", " + state() + ", " + mode + "}";
  }
}
