package dev.parapet.core.outlier;

/** Why a host was ejected (or would have been). */
public enum EjectionReason {
  /** {@code consecutive_5xx} responses (or connect failures) in a row. */
  CONSECUTIVE_5XX,
  /** {@code consecutive_gateway_failures} 502/503/504 or connect failures in a row. */
  CONSECUTIVE_GATEWAY_FAILURE,
  /** Failure fraction at or above {@code failure_percentage} over at least {@code min_requests}. */
  FAILURE_PERCENTAGE,
  /** Not an ejection: the host's ejection time is up and it takes traffic again. */
  RETURNED
}
