package dev.parapet.core.breaker;

/** Why a breaker changed state; carried by every {@link TransitionEvent}. */
public enum Reason {
  /** Weighted failure rate reached the threshold with enough volume. */
  FAILURE_RATE,
  /** Slow-call rate reached the threshold with enough volume. */
  SLOW_RATE,
  /** Connect failures reached the fast-trip count within its span (no volume minimum). */
  CONNECT_FAILURES,
  /** Active health checks found the protected hosts down. */
  HEALTH_CHECK_FAILED,
  /** The open time passed; probing begins. */
  BACKOFF_ELAPSED,
  /** A probe failed or timed out. */
  PROBE_FAILED,
  /** A probe did not complete within the probe timeout (a lost permit counts as failure). */
  PROBE_TIMED_OUT,
  /** Too few probes succeeded under the probe latency limit. */
  PROBES_TOO_SLOW,
  /** Enough probes succeeded. */
  PROBES_PASSED,
  /** The traffic ramp reached 100 %. */
  RAMP_COMPLETE,
  /** An operator forced the breaker open. */
  FORCED_OPEN,
  /** An operator closed or reset the breaker. */
  FORCED_CLOSED,
  /** An operator disabled the breaker. */
  DISABLED
}
