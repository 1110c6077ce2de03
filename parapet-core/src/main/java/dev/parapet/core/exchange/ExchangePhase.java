package dev.parapet.core.exchange;

/**
 * Where an {@link AttemptSequence} is. Legal moves: NEW → ADMISSION → ATTEMPTING → ANSWERING →
 * SUCCEEDED, and from any phase that is not over to FAILED or CANCELLED.
 */
public enum ExchangePhase {
  /** {@link AttemptSequence#begin} not called yet. */
  NEW,
  /** The breaker let the first attempt go; admission control has not admitted it yet. */
  ADMISSION,
  /** Attempts run, or a retry is due; no response head went to the client yet. */
  ATTEMPTING,
  /** A winning attempt's response is being delivered. */
  ANSWERING,
  /** Answered by the origin. */
  SUCCEEDED,
  /** Answered with a local error ({@link ExchangeFailure}). */
  FAILED,
  /** The client went away first. */
  CANCELLED;

  /** Whether the request is over. */
  public boolean isOver() {
    return this == SUCCEEDED || this == FAILED || this == CANCELLED;
  }

  boolean mayMoveTo(ExchangePhase next) {
    return switch (this) {
      case NEW -> next == ADMISSION || next == FAILED || next == CANCELLED;
      case ADMISSION -> next == ATTEMPTING || next == FAILED || next == CANCELLED;
      case ATTEMPTING -> next == ANSWERING || next == FAILED || next == CANCELLED;
      case ANSWERING -> next == SUCCEEDED || next == FAILED || next == CANCELLED;
      case SUCCEEDED, FAILED, CANCELLED -> false;
    };
  }
}
