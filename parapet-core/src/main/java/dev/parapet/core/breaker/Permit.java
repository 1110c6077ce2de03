package dev.parapet.core.breaker;

import dev.parapet.core.outcome.Outcome;

/**
 * One admitted call, completed exactly once.
 *
 * <p>A permit is owned by the caller and reused: the proxy keeps one per request (or per attempt),
 * so admitting a call allocates nothing. {@link CircuitBreaker#tryAcquire(AbstractPermit, long)}
 * arms it when the call is admitted; exactly one of {@link #onOutcome} or {@link #release} then
 * completes it. A second completion changes nothing and is counted as misuse on the breaker ({@link
 * CircuitBreaker#misuseCount()}), unlike a listener that would silently count twice. Re-arming a
 * permit that is still active is a programming error and throws. An object that lives exactly as
 * long as its call can be its own permit instead ({@link AbstractPermit}).
 *
 * <p>Thread-safety: completion may happen on another thread than acquisition, and concurrent
 * completions race safely through one compare-and-set.
 */
public final class Permit extends AbstractPermit {
  /** An idle permit, ready to be armed. */
  public Permit() {}

  /** Sets the id of the request this permit belongs to (shows up in transition events). */
  public Permit requestId(long id) {
    requestIdForEvents(id);
    return this;
  }

  @Override
  public boolean onOutcome(Outcome outcome, long nowNanos) {
    return super.onOutcome(outcome, nowNanos);
  }

  @Override
  public boolean release(long nowNanos) {
    return super.release(nowNanos);
  }
}
