package dev.parapet.sim;

import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.exchange.Attempt;
import dev.parapet.core.exchange.AttemptSequence;
import dev.parapet.core.exchange.ExchangeFailure;
import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.retry.RetryAfter;
import dev.parapet.sim.Series.Col;
import org.jspecify.annotations.Nullable;

/**
 * One simulated request to the origin under test: the core's {@link AttemptSequence} — the proxy's
 * request sequence, the same code the proxy's exchange extends — driven in virtual time. Every
 * decision between arrival and answer is the sequence's: breaker admission, admission control, the
 * deadline check, each attempt's timeout, classification, evidence, retries within the budget, the
 * hedge and its race. This class only does what the proxy's network would do, and counts.
 *
 * <ul>
 *   <li>{@link #pick}: an attempt against this server's breaker and attempt policy (one host per
 *       server, so a retry or a hedge goes to the same breaker);
 *   <li>{@link #startAttempt}: draws the origin's answer ({@link Origin#draw}), reports the request
 *       sent at once (no connections here) and schedules the attempt's end;
 *   <li>at that end ({@link #attemptEnded}): a failure ({@link Outcome#TIMEOUT}, {@link
 *       Outcome#CONNECT_FAILURE}) or a response head, then, when it won, the response's completion
 *       (the whole response arrives with its head);
 *   <li>timers are pooled engine events; a cancelled one costs nothing when it fires;
 *   <li>admission control decides about queued requests inside another request's completion, on the
 *       one simulation thread, so {@link #admissionDecided} resumes at once.
 * </ul>
 */
final class SimRequest extends AttemptSequence<SimAttempt> {
  // Up to 2.2 million requests are in flight at once and each event touches one: fields are few.
  // The simulation is the server's, the arrival time is the deadline less the edge's timeout, and
  // one timer field is enough since the sequence never has two timers pending (ExchangeHooks).
  final SimServer server;
  private @Nullable Wakeup timer;

  SimRequest(SimServer server, long id, long now) {
    super(
        id,
        now + server.sim.edgeTimeoutNanos,
        server.sim.deadlines,
        server.admission,
        2,
        RequestKind.ORDINARY,
        true,
        server.sim.hedging);
    this.server = server;
  }

  /** When the request arrived at the edge. */
  long startNanos() {
    return expiresAtNanos() - server.sim.edgeTimeoutNanos;
  }

  /**
   * Reads what an event of this request reads first, ahead of time (see {@link SimEvent#touch}).
   */
  long touch() {
    return phase().ordinal() + attempts();
  }

  // ---------------------------------------------------------------------------------------------
  // Engine events

  /** The end event of {@code a}: the origin's answer arrives, unless the attempt ended before. */
  void attemptEnded(SimAttempt a, long now) {
    if (a.state() != Attempt.State.SENT) {
      return; // cancelled meanwhile: a hedge race lost, or the request is over
    }
    Outcome failure = a.failure;
    if (failure != null) {
      onAttemptFailed(a, failure, now);
    } else if (onResponseHead(a, a.status, RetryAfter.ABSENT, now)) {
      onResponseComplete(a, now);
    }
  }

  void timerDue(Timer due, long now) {
    timer = null;
    onTimer(due, now);
  }

  // ---------------------------------------------------------------------------------------------
  // The sequence's hooks

  @Override
  protected SimAttempt pick(Attempt.Kind kind, @Nullable SimAttempt previous, long now) {
    return new SimAttempt(kind, server.breaker, server.policy);
  }

  @Override
  protected void startAttempt(SimAttempt a, long now) {
    FleetSimulation sim = server.sim;
    int sec = sim.second(now);
    Series series = sim.series;
    series.add(sec, Col.ATTEMPTS, 1);
    switch (a.kind()) {
      case RETRY -> series.add(sec, Col.RETRIES, 1);
      case HEDGE -> series.add(sec, Col.HEDGES, 1);
      case FIRST -> {}
    }
    if (a.isProbe()) {
      series.add(sec, Col.PROBES, 1);
    }
    long hold = sim.origin.draw(a, now);
    onSent(a, now);
    Wakeup w = sim.wakeups.obtain();
    w.request = this;
    w.attempt = a;
    sim.engine.schedule(w, now + hold);
  }

  @Override
  protected void releaseAttempt(SimAttempt a, boolean complete) {
    FleetSimulation sim = server.sim;
    sim.connectorReleased(sim.engine.now() - a.sentNanos());
  }

  @Override
  protected void recordEvidence(SimAttempt a, Outcome outcome, long latencyNanos, long now) {
    if (outcome == Outcome.TIMEOUT) {
      server.sim.count(Col.TIMEOUTS, now);
    }
  }

  @Override
  protected void schedule(Timer which, long delayNanos) {
    Wakeup pending = timer;
    if (pending != null) {
      throw new IllegalStateException(
          "timer : " + which + " while " + pending.timer + " is pending (expected: one at a time)");
    }
    FleetSimulation sim = server.sim;
    Wakeup w = sim.wakeups.obtain();
    w.request = this;
    w.timer = which;
    timer = w;
    sim.engine.schedule(w, sim.engine.now() + delayNanos);
  }

  @Override
  protected void cancelTimer(Timer which) {
    Wakeup w = timer;
    if (w != null && w.timer == which) {
      w.request = null; // it fires for nothing and goes back to the pool
      timer = null;
    }
  }

  @Override
  protected void admissionDecided(@Nullable RejectReason shed) {
    resumeAdmission(shed, server.sim.engine.now());
  }

  @Override
  protected void retryDecided(long decision) {
    FleetSimulation sim = server.sim;
    sim.decisions(sim.engine.now()).retry(decision);
  }

  @Override
  protected void hedgeDecided(HedgeDecision decision) {
    FleetSimulation sim = server.sim;
    sim.decisions(sim.engine.now()).hedge(decision);
  }

  @Override
  protected void hedgeRaceEnded(SimAttempt winner) {
    FleetSimulation sim = server.sim;
    if (winner.kind() == Attempt.Kind.HEDGE) {
      sim.count(Col.HEDGE_WINS, sim.engine.now());
    }
  }

  @Override
  protected void succeeded(SimAttempt winner, long now) {
    boolean ok = !winner.outcome().isFailure();
    if (ok) {
      server.sim.count(Col.ORIGIN_OK, now);
    }
    server.sim.answered(this, ok, now);
  }

  @Override
  protected void failed(ExchangeFailure failure, @Nullable SimAttempt cause, long now) {
    FleetSimulation sim = server.sim;
    Decisions d = sim.decisions(now);
    d.failure(failure);
    switch (failure) {
      case BREAKER_OPEN, RETRY_BREAKER_OPEN -> sim.count(Col.FAST_FAIL, now);
      case SHED -> {
        sim.count(Col.SHED, now);
        if (cause != null && cause.isProbe()) {
          d.probeShed();
        }
      }
      default -> {}
    }
    sim.answered(this, false, now);
  }
}
