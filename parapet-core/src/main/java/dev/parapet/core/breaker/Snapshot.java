package dev.parapet.core.breaker;

/**
 * What a {@link CircuitBreaker} is in, immutable: a change is a compare-and-set of the whole object
 * from the one it was computed from. The update functions below are free of side effects, so a
 * failed compare-and-set simply recomputes.
 */
final class Snapshot {
  final State state;
  final long sinceNanos;
  final long epoch;

  /** Consecutive re-opens without a completed ramp (drives the backoff). */
  final int level;

  final long openUntilNanos;
  final int probesIssued;
  final boolean probeInFlight;
  final int probesSucceeded;
  final long lastProbeNanos;

  private Snapshot(
      State state,
      long sinceNanos,
      long epoch,
      int level,
      long openUntilNanos,
      int probesIssued,
      boolean probeInFlight,
      int probesSucceeded,
      long lastProbeNanos) {
    this.state = state;
    this.sinceNanos = sinceNanos;
    this.epoch = epoch;
    this.level = level;
    this.openUntilNanos = openUntilNanos;
    this.probesIssued = probesIssued;
    this.probeInFlight = probeInFlight;
    this.probesSucceeded = probesSucceeded;
    this.lastProbeNanos = lastProbeNanos;
  }

  static Snapshot closed(long now, long epoch) {
    return new Snapshot(State.CLOSED, now, epoch, 0, 0, 0, false, 0, 0);
  }

  static Snapshot simple(State state, long now, long epoch) {
    return new Snapshot(state, now, epoch, 0, 0, 0, false, 0, 0);
  }

  static Snapshot open(long now, long epoch, int level, long openUntil) {
    return new Snapshot(State.OPEN, now, epoch, level, openUntil, 0, false, 0, 0);
  }

  static Snapshot ramping(long now, long epoch, int level) {
    return new Snapshot(State.RAMPING, now, epoch, level, 0, 0, false, 0, 0);
  }

  Snapshot halfOpenWithFirstProbe(long now) {
    return new Snapshot(State.HALF_OPEN, now, epoch, level, openUntilNanos, 1, true, 0, now);
  }

  Snapshot withProbeIssued(long now) {
    return new Snapshot(
        state,
        sinceNanos,
        epoch,
        level,
        openUntilNanos,
        probesIssued + 1,
        true,
        probesSucceeded,
        now);
  }

  Snapshot withProbeReturned() {
    return new Snapshot(
        state,
        sinceNanos,
        epoch,
        level,
        openUntilNanos,
        probesIssued - 1,
        false,
        probesSucceeded,
        lastProbeNanos);
  }

  Snapshot withProbeDone(boolean ok) {
    return new Snapshot(
        state,
        sinceNanos,
        epoch,
        level,
        openUntilNanos,
        probesIssued,
        false,
        probesSucceeded + (ok ? 1 : 0),
        lastProbeNanos);
  }
}
