package dev.parapet.core.window;

import dev.parapet.core.outcome.Outcome;

/**
 * Recent evidence about an origin: how many calls, how many failed, how many were slow.
 *
 * <p>Two kinds, both bounded in memory and both aging old evidence out: {@link TimeWindow} (the
 * last N seconds in buckets, seed 000's "10-second rolling window with 100 buckets") and {@link
 * CountWindow} (the last N calls, seed 002's "evaluates the last 20 eligible calls").
 *
 * <p>Recording is thread-safe and allocation-free. Readings are exact when one thread drives the
 * window; with concurrent recorders a reading may miss the few records racing with it, never
 * double-count them and never drift afterwards.
 */
public interface OutcomeWindow {

  /** Records one outcome kind at {@code nowNanos}; {@link Outcome.Kind#IGNORED} is a no-op. */
  void record(Outcome.Kind kind, long nowNanos);

  /** Calls (successes, slow calls and failures) in the window at {@code nowNanos}. */
  long calls(long nowNanos);

  /** Failures (full weight) in the window at {@code nowNanos}. */
  long failures(long nowNanos);

  /** Slow calls in the window at {@code nowNanos}. */
  long slowCalls(long nowNanos);

  /** Forgets all evidence; recording may continue concurrently. */
  void reset(long nowNanos);

  /** A consistent-enough reading for reports and events (allocates). */
  default Reading read(long nowNanos) {
    return new Reading(calls(nowNanos), failures(nowNanos), slowCalls(nowNanos));
  }

  /** Counts at one moment. */
  record Reading(long calls, long failures, long slowCalls) {

    /** {@code (failures + slowWeight * slow) / calls}, or 0 with no calls. */
    public double weightedFailureRate(double slowWeight) {
      return calls == 0 ? 0.0 : (failures + slowWeight * slowCalls) / calls;
    }

    /** {@code slow / calls}, or 0 with no calls. */
    public double slowRate() {
      return calls == 0 ? 0.0 : (double) slowCalls / calls;
    }
  }
}
