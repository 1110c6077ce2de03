package dev.parapet.core.retry;

/**
 * Why {@link RetryPolicy#decide} refused a retry. The decision itself is a {@code long} (a delay,
 * or one of these codes, all negative) so the check allocates nothing; this enum names the code for
 * metrics ({@code parapet_retries_total{result}}) and logs.
 */
public enum RetryRefusal {
  /** The failure was a local rejection (open breaker, shed, pool full): never retried. */
  LOCAL_REJECTION(-1L),
  /** The request already made {@code maxAttempts} attempts. */
  ATTEMPTS_EXHAUSTED(-2L),
  /** The delay (backoff or Retry-After) leaves less than {@code minUseful} of the deadline. */
  DEADLINE(-3L),
  /** The retry budget is full. */
  BUDGET(-4L),
  /**
   * The overload manager has switched retries off (heap, CPU or event-loop lag over its threshold):
   * extra load is the first thing an overloaded proxy stops making.
   */
  OVERLOAD(-5L),
  /**
   * The next tier said it is degraded ({@link UpstreamCapacity}) and this request's share of the
   * extra load it still takes is spent.
   */
  UPSTREAM_DEGRADED(-6L);

  private final long code;

  RetryRefusal(long code) {
    this.code = code;
  }

  /** The negative value {@link RetryPolicy#decide} returns for this refusal. */
  public long code() {
    return code;
  }

  private static final RetryRefusal[] ALL = values();

  /** The refusal a negative decision stands for (allocation-free: a metric label per retry). */
  public static RetryRefusal of(long decision) {
    for (RetryRefusal r : ALL) {
      if (r.code == decision) {
        return r;
      }
    }
    throw new IllegalArgumentException("decision : " + decision + " (expected: one of -1 to -6)");
  }
}
