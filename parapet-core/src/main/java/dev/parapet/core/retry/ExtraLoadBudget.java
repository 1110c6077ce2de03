package dev.parapet.core.retry;

/**
 * The "extra load" an origin receives beyond one attempt per request: retries and hedges.
 *
 * <p>Envoy and Finagle budget retries only; hedges, where offered, have their own cap. Seed 001
 * asks for one budget over both ("hedged requests with a strict retry budget"), so that a slow
 * origin which triggers both hedges and retries never receives more than one ceiling's worth of
 * extra attempts. Both arrangements are offered:
 *
 * <ul>
 *   <li>{@link Sharing#SHARED}: retries and hedges in flight together stay within one {@link
 *       RetryBudget} ({@code max(5, 20 % of active requests)} by default).
 *   <li>{@link Sharing#SEPARATE}: retries use the budget alone; hedges are bounded only by their
 *       own rate cap (15 % of requests, in {@code HedgePolicy}) and are counted in an unbounded
 *       budget, so the same {@link BudgetSlot} protocol works in both modes.
 * </ul>
 *
 * The hedge rate cap applies in both modes: sharing adds a ceiling, it never removes one.
 */
public final class ExtraLoadBudget {
  /** Whether retries and hedges draw from one concurrency budget. */
  public enum Sharing {
    SHARED,
    SEPARATE
  }

  private final RetryBudget retries;
  private final RetryBudget hedges;
  private final Sharing sharing;

  /** Builds the extra-load budget over {@code retries} with the given sharing. */
  public ExtraLoadBudget(RetryBudget retries, Sharing sharing) {
    this.retries = retries;
    this.sharing = sharing;
    this.hedges = sharing == Sharing.SHARED ? retries : RetryBudget.unbounded();
  }

  /** One shared budget with the defaults (20 %, at least 5). */
  public static ExtraLoadBudget sharedDefaults() {
    return new ExtraLoadBudget(RetryBudget.withDefaults(), Sharing.SHARED);
  }

  /** Counts a request that may retry or hedge; pair with one {@link #requestFinished()}. */
  public void requestStarted() {
    retries.requestStarted();
  }

  /** Counts a request as finished. */
  public void requestFinished() {
    retries.requestFinished();
  }

  /** Takes a place for a retry; release it through {@code slot} when the retry attempt ends. */
  public boolean tryRetry(BudgetSlot slot) {
    return retries.tryAcquire(slot);
  }

  /** Takes a place for a hedge; release it through {@code slot} when the hedge attempt ends. */
  public boolean tryHedge(BudgetSlot slot) {
    return hedges.tryAcquire(slot);
  }

  /** The sharing mode. */
  public Sharing sharing() {
    return sharing;
  }

  /** The budget retries draw from (also the hedges' one when shared). */
  public RetryBudget retryBudget() {
    return retries;
  }

  /** The budget hedges draw from: the retry budget when shared, an unbounded counter otherwise. */
  public RetryBudget hedgeBudget() {
    return hedges;
  }
}
