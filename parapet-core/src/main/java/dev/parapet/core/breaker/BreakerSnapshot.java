package dev.parapet.core.breaker;

/**
 * A breaker at one moment, for the admin API and dashboards.
 *
 * @param key the breaker
 * @param state its state
 * @param mode enforce or shadow
 * @param calls calls in the window
 * @param failureRate weighted failure rate in the window
 * @param slowRate slow-call rate in the window
 * @param openRemainingNanos time left while OPEN, else 0
 * @param backoffLevel consecutive re-opens (open time is base × 2^level)
 * @param probesIssued probes sent in the current half-open episode
 * @param probesSucceeded probes that succeeded in it
 * @param flapping whether the flapping threshold is crossed
 * @param rejected calls rejected so far
 * @param shadowRejected calls shadow mode would have rejected
 * @param transitions state changes so far
 * @param misuse completions after the first
 */
public record BreakerSnapshot(
    BreakerKey key,
    State state,
    Mode mode,
    long calls,
    double failureRate,
    double slowRate,
    long openRemainingNanos,
    int backoffLevel,
    int probesIssued,
    int probesSucceeded,
    boolean flapping,
    long rejected,
    long shadowRejected,
    long transitions,
    long misuse) {}
