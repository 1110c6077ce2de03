package dev.parapet.core.breaker;

/**
 * The answer to "may this call go to the origin?". A value, so deciding allocates nothing.
 *
 * <p>Rejections are local: the caller must not record them as origin evidence (use {@link
 * dev.parapet.core.outcome.Outcome#LOCAL_REJECTION} in its own metrics) and must not retry them
 * against the same breaker.
 */
public enum Decision {
  /** Admitted; complete the permit with the outcome. */
  PERMITTED(true),
  /** Admitted as a half-open probe; complete the permit with the outcome. */
  PROBE(true),
  /**
   * Shadow mode: admitted although enforcing would have rejected it ({@link
   * Permit#shadowedDecision()} tells which rejection). Its outcome is not evidence for the breaker.
   */
  SHADOW_PERMITTED(true),
  /** Rejected: the breaker is open. */
  REJECTED_OPEN(false),
  /** Rejected: half-open and a probe is in flight, spaced out, or synthetic probes are used. */
  REJECTED_HALF_OPEN(false),
  /** Rejected: ramping and this call is beyond the admitted share. */
  REJECTED_RAMPING(false),
  /** Rejected: an operator forced the breaker open. */
  REJECTED_FORCED_OPEN(false),
  /** For synthetic probers: no probe is due in the current state. */
  NO_PROBE_DUE(false);

  private final boolean permitted;

  Decision(boolean permitted) {
    this.permitted = permitted;
  }

  /** True when the call may go to the origin (its permit must then be completed). */
  public boolean isPermitted() {
    return permitted;
  }
}
