package dev.parapet.core.breaker;

/** Breaker states; the legal moves between them are listed in {@link Transition}. */
public enum State {
  /** Normal traffic flows; outcomes are recorded and evaluated. */
  CLOSED,
  /** Calls fail fast until the (jittered, growing) open time has passed. */
  OPEN,
  /** A few probes, one at a time and spaced out, test whether the origin is back. */
  HALF_OPEN,
  /** The origin is back: a growing share of traffic is admitted while the window is watched. */
  RAMPING,
  /** Held open by an operator; only an operator closes it. */
  FORCED_OPEN,
  /** Admits everything and records nothing, set by an operator. */
  DISABLED;

  /** Numeric value for the {@code parapet_breaker_state} gauge. */
  public int gaugeValue() {
    return ordinal();
  }
}
