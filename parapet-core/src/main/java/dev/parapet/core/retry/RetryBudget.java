package dev.parapet.core.retry;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A concurrency budget for extra attempts (retries, and hedges when they share it): an extra
 * attempt may start while {@code activeRetries + 1 <= max(minConcurrency, floor(ratio *
 * activeRequests))}. Defaults 20 % and 5, as Envoy's {@code retry_budget} ({@code budget_percent},
 * {@code min_retry_concurrency}) and the seeds (003, 004) configure it; Finagle's retry budget has
 * the same purpose (cap retries relative to real traffic, with a floor for low volume).
 *
 * <p>"Active requests" are requests in progress that may retry ({@link #requestStarted()} / {@link
 * #requestFinished()}), counted once per request however many attempts it makes. "Active retries"
 * are slots held through {@link #tryAcquire(BudgetSlot)} until {@link BudgetSlot#release()}.
 *
 * <p><b>Algorithm vs gate.</b> {@link #allows(long, long, double, int)} is the pure rule; {@link
 * #tryAcquire} is the gate. Both counters live in one {@code AtomicLong} (requests in the high 32
 * bits, retries in the low 32), so the check and the increment are one CAS on one consistent
 * snapshot: the budget is never exceeded at the moment a slot is granted, however many threads
 * race. (It can be exceeded afterwards when requests finish while retries are still running, as in
 * Envoy: the budget gates starts, it never cancels work.) No allocation, no lock.
 */
public final class RetryBudget {
  private static final long REQUEST = 1L << 32;
  private static final long RETRY_MASK = REQUEST - 1;
  private static final long PPM = 1_000_000L;

  private final double ratio;
  private final long ratioPpm;
  private final int minConcurrency;
  private final AtomicLong state = new AtomicLong();
  private final AtomicLong misuses = new AtomicLong();

  /**
   * Creates a budget.
   *
   * @param ratio share of active requests that may be retrying at once, in [0, 1]
   * @param minConcurrency retries always allowed at once, even with little traffic, >= 0
   */
  public RetryBudget(double ratio, int minConcurrency) {
    if (!(ratio >= 0.0 && ratio <= 1.0)) {
      throw new IllegalArgumentException("ratio : " + ratio + " (expected: in [0, 1])");
    }
    if (minConcurrency < 0) {
      throw new IllegalArgumentException(
          "minConcurrency : " + minConcurrency + " (expected: >= 0)");
    }
    this.ratio = ratio;
    this.ratioPpm = toPpm(ratio);
    this.minConcurrency = minConcurrency;
  }

  /** 20 % of active requests, at least 5 concurrent retries. */
  public static RetryBudget withDefaults() {
    return new RetryBudget(0.20, 5);
  }

  /** A budget that never refuses but still counts; hedges use it when budgets are separate. */
  public static RetryBudget unbounded() {
    return new RetryBudget(1.0, Integer.MAX_VALUE);
  }

  /**
   * The rule: may one more extra attempt start when {@code activeRetries} are running among {@code
   * activeRequests}?
   */
  public static boolean allows(
      long activeRequests, long activeRetries, double ratio, int minConcurrency) {
    return allowsPpm(activeRequests, activeRetries, toPpm(ratio), minConcurrency);
  }

  // The ratio in millionths: exact for percentages (0.29 * 100 is 28.999... in doubles), and
  // integer arithmetic on the hot path. Requests < 2^32, ppm <= 10^6: the product fits a long.
  private static boolean allowsPpm(
      long activeRequests, long activeRetries, long ratioPpm, int minConcurrency) {
    long byRatio = activeRequests * ratioPpm / PPM;
    return activeRetries + 1 <= Math.max(minConcurrency, byRatio);
  }

  private static long toPpm(double ratio) {
    return Math.round(ratio * PPM);
  }

  /** Counts a request that may retry; pair with exactly one {@link #requestFinished()}. */
  public void requestStarted() {
    state.addAndGet(REQUEST);
  }

  /**
   * Counts a request as finished. A call with no request active is a no-op counted as misuse (the
   * counter never goes negative, which would silently shrink the budget).
   */
  public void requestFinished() {
    while (true) {
      long s = state.get();
      if ((s >>> 32) == 0) {
        misuses.incrementAndGet();
        return;
      }
      if (state.compareAndSet(s, s - REQUEST)) {
        return;
      }
    }
  }

  /**
   * Takes a place for one extra attempt into {@code slot}, if the budget allows it now. Returns
   * {@code false} when the budget is full, or when {@code slot} is still held (misuse).
   */
  public boolean tryAcquire(BudgetSlot slot) {
    while (true) {
      long s = state.get();
      if (!allowsPpm(s >>> 32, s & RETRY_MASK, ratioPpm, minConcurrency)) {
        return false;
      }
      if (state.compareAndSet(s, s + 1)) {
        break;
      }
    }
    // Counted first, then claimed: a concurrent misuse of the same slot can only over-count for a
    // moment (conservative), never release a place that was not taken.
    if (!slot.claim(this)) {
      state.decrementAndGet();
      misuses.incrementAndGet();
      return false;
    }
    return true;
  }

  void releaseOne() {
    state.decrementAndGet();
  }

  void countMisuse() {
    misuses.incrementAndGet();
  }

  /** Requests currently counted as active. */
  public long activeRequests() {
    return state.get() >>> 32;
  }

  /** Extra attempts currently holding a slot. */
  public long activeRetries() {
    return state.get() & RETRY_MASK;
  }

  /** Double releases, acquires on held slots and unmatched {@link #requestFinished()} calls. */
  public long misuses() {
    return misuses.get();
  }

  /** The configured ratio. */
  public double ratio() {
    return ratio;
  }

  /** The configured floor. */
  public int minConcurrency() {
    return minConcurrency;
  }
}
