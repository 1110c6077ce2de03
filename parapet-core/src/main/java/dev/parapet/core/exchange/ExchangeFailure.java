package dev.parapet.core.exchange;

/** Why an {@link AttemptSequence} failed; its driver turns it into an answer. */
public enum ExchangeFailure {
  /** The breaker refused the first attempt (and the fallback's breaker, if any, refused too). */
  BREAKER_OPEN,
  /** Admission control shed the request ({@link AttemptSequence#shedReason()}). */
  SHED,
  /**
   * The origin's fleet-wide ceiling had no token for the first attempt, or for a retry that was due
   * ({@link AttemptPolicy#fleetLimit()}).
   */
  FLEET_LIMIT,
  /** The deadline left less than {@code min_useful} before the first attempt could start. */
  DEADLINE,
  /** The deadline left less than {@code min_useful} when a retry was due. */
  DEADLINE_BEFORE_RETRY,
  /** A retry was due but its breaker had opened meanwhile. */
  RETRY_BREAKER_OPEN,
  /** The last attempt failed and nothing else may be tried. */
  ATTEMPT_FAILED,
  /** The winning attempt failed after its response head went to the client. */
  TRUNCATED
}
