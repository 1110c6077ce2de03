package dev.parapet.core.retry;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * One request's claim on a {@link RetryBudget}: held from a successful {@code tryAcquire} until
 * {@link #release()}. Create one per request context and reuse it for every retry or hedge of that
 * request (acquire, release, acquire again), so the hot path allocates nothing.
 *
 * <p>Release is exactly-once: the first {@code release()} after an acquire gives the budget its
 * slot back; any further one is a no-op that returns {@code false} and is counted as misuse on the
 * budget (concurrency-limits' listener loses count when completed twice; this one cannot). An
 * acquire on a slot that is still held is refused and counted as misuse too.
 */
public final class BudgetSlot {
  private static final VarHandle HOLDER;

  static {
    try {
      HOLDER = MethodHandles.lookup().findVarHandle(BudgetSlot.class, "holder", RetryBudget.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // accessed through HOLDER
  private volatile @Nullable RetryBudget holder;

  // Attributes a double release to a budget for its misuse counter. Plain, but written before the
  // CAS that publishes the holder, so whoever sees that CAS (every later release) sees it too.
  private @Nullable RetryBudget lastHolder;

  /** A free slot. */
  public BudgetSlot() {}

  /** Whether this slot currently holds a place in a budget. */
  public boolean isHeld() {
    return holder != null;
  }

  /**
   * Gives the held place back to its budget. Returns {@code true} if this call released it, {@code
   * false} if the slot was not held (a double release, counted as misuse).
   */
  public boolean release() {
    RetryBudget h = (RetryBudget) HOLDER.getAndSet(this, null);
    if (h == null) {
      RetryBudget last = lastHolder;
      if (last != null) {
        last.countMisuse();
      }
      return false;
    }
    h.releaseOne();
    return true;
  }

  boolean claim(RetryBudget budget) {
    if (holder != null) {
      return false; // held: do not touch lastHolder, the holder's budget owns the slot
    }
    lastHolder = budget;
    return HOLDER.compareAndSet(this, null, budget);
  }
}
