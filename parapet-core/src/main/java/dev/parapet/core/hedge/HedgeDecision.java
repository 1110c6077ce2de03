package dev.parapet.core.hedge;

/** The outcome of {@link HedgePolicy#tryHedge}: send the hedge, or why not. */
public enum HedgeDecision {
  /** Send the hedge; its extra-load place is held in the request's slot. */
  HEDGE,
  /** This request already sent its one hedge. */
  ALREADY_HEDGED,
  /** The breaker is not CLOSED: an origin under suspicion gets no extra load. */
  BREAKER_NOT_CLOSED,
  /** Hedges already reached their share of requests (15 %). */
  RATE_EXHAUSTED,
  /** The extra-load budget (shared with retries, when shared) is full. */
  EXTRA_LOAD_EXHAUSTED,
  /** The overload manager has switched hedges off (decided by the caller, not the policy). */
  OVERLOAD,
  /**
   * The origin said it is degraded and the extra load it still takes is spent (decided by the
   * caller, {@code UpstreamCapacity}).
   */
  UPSTREAM_DEGRADED;

  /** Whether the hedge goes ahead. */
  public boolean isHedge() {
    return this == HEDGE;
  }
}
