package dev.parapet.core.hedge;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Caps hedges at a share of requests (default 15 %, seed 001: "cap hedges to 15 % of total origin
 * traffic").
 *
 * <p><b>How it works.</b> A token bucket counted in requests, not time (Finagle's {@code
 * RetryBudget} deposits per request and withdraws per retry the same way): each request deposits
 * {@code ratio} of a token, each hedge withdraws a whole one, and the balance is capped at {@code
 * burst} tokens. Starting empty, the number of hedges granted never exceeds {@code floor(ratio *
 * requests)} over any sequence, on any number of threads: an exact invariant, checked by property
 * tests. The cap bounds how much unused allowance a quiet period can save up for a burst.
 *
 * <p><b>Why not a rolling window of counts?</b> A window (requests vs hedges over the last N
 * seconds) needs time buckets and still lets a burst at a bucket boundary exceed the ratio, and
 * after a quiet spell it forgets the history the ratio is about. The bucket is one {@code
 * AtomicLong}, one CAS per operation, no time input, and states its guarantee without "about".
 * Tokens are fixed point (millionths), so deposits are exact integers.
 */
public final class HedgeRateBudget {
  private static final long UNIT = 1_000_000L;

  private final long deposit;
  private final long capacity;
  private final AtomicLong balance = new AtomicLong();

  /**
   * Creates an empty budget.
   *
   * @param ratio hedges per request, in (0, 1]
   * @param burst most hedges that may be saved up, >= 1
   */
  public HedgeRateBudget(double ratio, int burst) {
    if (!(ratio > 0.0 && ratio <= 1.0)) {
      throw new IllegalArgumentException("ratio : " + ratio + " (expected: in (0, 1])");
    }
    if (burst < 1) {
      throw new IllegalArgumentException("burst : " + burst + " (expected: >= 1)");
    }
    this.deposit = Math.round(ratio * UNIT);
    this.capacity = burst * UNIT;
  }

  /** 15 % of requests, at most 10 hedges saved up. */
  public static HedgeRateBudget withDefaults() {
    return new HedgeRateBudget(0.15, 10);
  }

  /** Counts one request that could be hedged: deposits its share of a hedge. */
  public void onRequest() {
    while (true) {
      long b = balance.get();
      if (b >= capacity) {
        return; // full: no write, so a saturated budget costs one read
      }
      if (balance.compareAndSet(b, Math.min(capacity, b + deposit))) {
        return;
      }
    }
  }

  /** Takes one hedge's worth if available. */
  public boolean tryAcquire() {
    while (true) {
      long b = balance.get();
      if (b < UNIT) {
        return false;
      }
      if (balance.compareAndSet(b, b - UNIT)) {
        return true;
      }
    }
  }

  /** Gives back a hedge taken by {@link #tryAcquire()} that was then not sent. */
  void refund() {
    balance.addAndGet(UNIT);
  }

  /** Hedges currently available (whole tokens). */
  public long available() {
    return balance.get() / UNIT;
  }
}
