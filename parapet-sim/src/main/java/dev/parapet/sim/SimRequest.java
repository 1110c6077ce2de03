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
  private final FleetSimulation sim;
  final SimServer server;
  final long startNanos;
  private @Nullable Wakeup retryTimer;
  private @Nullable Wakeup hedgeTimer;

  SimRequest(FleetSimulation sim, SimServer server, long id, long now) {
    super(
        id,
        now + sim.edgeTimeoutNanos,
        sim.deadlines,
        server.admission,
        2,
        RequestKind.ORDINARY,
        true,
        sim.hedging);
    this.sim = sim;
    this.server = server;
    this.startNanos = now;
  }

  /**
   * Reads what an event of this request reads first, ahead of time (see {@link SimEvent#touch}).
   */
  long touch() {
    return phase().ordinal() + startNanos + attempts();
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

  void timerDue(Timer timer, long now) {
    if (timer == Timer.RETRY) {
      retryTimer = null;
    } else {
      hedgeTimer = null;
    }
    onTimer(timer, now);
  }

  // ---------------------------------------------------------------------------------------------
  // The sequence's hooks

  @Override
  protected SimAttempt pick(Attempt.Kind kind, @Nullable SimAttempt previous, long now) {
    return new SimAttempt(kind, server.breaker, server.policy);
  }

  @Override
  protected void startAttempt(SimAttempt a, long now) {
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
    sim.connectorReleased(sim.engine.now() - a.sentNanos());
  }

  @Override
  protected void recordEvidence(SimAttempt a, Outcome outcome, long latencyNanos, long now) {
    if (outcome == Outcome.TIMEOUT) {
      sim.count(Col.TIMEOUTS, now);
    }
  }

  @Override
  protected void schedule(Timer timer, long delayNanos) {
    Wakeup w = sim.wakeups.obtain();
    w.request = this;
    w.timer = timer;
    if (timer == Timer.RETRY) {
      retryTimer = w;
    } else {
      hedgeTimer = w;
    }
    sim.engine.schedule(w, sim.engine.now() + delayNanos);
  }

  @Override
  protected void cancelTimer(Timer timer) {
    Wakeup w = timer == Timer.RETRY ? retryTimer : hedgeTimer;
    if (w != null) {
      w.request = null; // it fires for nothing and goes back to the pool
      if (timer == Timer.RETRY) {
        retryTimer = null;
      } else {
        hedgeTimer = null;
      }
    }
  }

  @Override
  protected void admissionDecided(@Nullable RejectReason shed) {
    resumeAdmission(shed, sim.engine.now());
  }

  @Override
  protected void retryDecided(long decision) {
    sim.decisions(sim.engine.now()).retry(decision);
  }

  @Override
  protected void hedgeDecided(HedgeDecision decision) {
    sim.decisions(sim.engine.now()).hedge(decision);
  }

  @Override
  protected void hedgeRaceEnded(SimAttempt winner) {
    if (winner.kind() == Attempt.Kind.HEDGE) {
      sim.count(Col.HEDGE_WINS, sim.engine.now());
    }
  }

  @Override
  protected void succeeded(SimAttempt winner, long now) {
    boolean ok = !winner.outcome().isFailure();
    if (ok) {
      sim.count(Col.ORIGIN_OK, now);
    }
    sim.answered(this, ok, now);
  }

  @Override
  protected void failed(ExchangeFailure failure, @Nullable SimAttempt cause, long now) {
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
