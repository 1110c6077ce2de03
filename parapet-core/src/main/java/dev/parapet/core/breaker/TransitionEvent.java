package dev.parapet.core.breaker;

/**
 * One state change, with the evidence behind it (seed 002: "dependency identity, breaker scope,
 * previous state, next state, transition reason, observation count, failure ratio, and probe
 * count"; seed 001: "log every circuit state transition ... with a request ID").
 *
 * @param key the breaker (its scope is {@code key.scope()})
 * @param from the state left
 * @param to the state entered
 * @param reason why
 * @param observations calls in the window when it happened
 * @param failureRate weighted failure rate in the window, 0..1
 * @param slowRate slow-call rate in the window, 0..1
 * @param probes probes issued in the half-open episode (0 outside probing)
 * @param openNanos when entering OPEN: the jittered open time chosen; else 0
 * @param nowNanos the ticker reading when it happened
 * @param requestId id of the request that tipped it, or 0 when none (operator, timer)
 */
public record TransitionEvent(
    BreakerKey key,
    State from,
    State to,
    Reason reason,
    long observations,
    double failureRate,
    double slowRate,
    int probes,
    long openNanos,
    long nowNanos,
    long requestId) {

  /** The breaker's scope. */
  public Scope scope() {
    return key.scope();
  }
}
