package dev.parapet.core.deadline;

/**
 * The instant (monotonic nanos) by which a request must be answered, and the arithmetic on it.
 *
 * <p>Readings of {@link System#nanoTime()} may wrap around {@link Long#MAX_VALUE}; a deadline is
 * therefore never compared with {@code <}: {@link #remainingNanos(long)} is {@code expiresAt -
 * now}, which is right across the wrap as long as the budget is below 292 years. Budgets are
 * clamped to {@link #MAX_BUDGET_NANOS} so the subtraction never overflows.
 *
 * <p>The static methods do the same on a bare {@code long}, for callers that keep the deadline in a
 * primitive field and allocate nothing per request.
 */
public final class Deadline {
  /** Largest budget a deadline carries: about 146 years, half the range of nanoTime. */
  public static final long MAX_BUDGET_NANOS = Long.MAX_VALUE / 2;

  private final long expiresAtNanos;

  private Deadline(long expiresAtNanos) {
    this.expiresAtNanos = expiresAtNanos;
  }

  /** A deadline {@code budgetNanos} after {@code nowNanos}; negative budgets mean "already due". */
  public static Deadline after(long budgetNanos, long nowNanos) {
    return new Deadline(expiresAt(budgetNanos, nowNanos));
  }

  /** The expiry instant for {@code budgetNanos} from {@code nowNanos}, clamped as documented. */
  public static long expiresAt(long budgetNanos, long nowNanos) {
    long budget = Math.max(0L, Math.min(budgetNanos, MAX_BUDGET_NANOS));
    return nowNanos + budget; // may wrap: that is fine, readers subtract
  }

  /** Nanoseconds left until {@code expiresAtNanos}; negative once it has passed. */
  public static long remainingNanos(long expiresAtNanos, long nowNanos) {
    return expiresAtNanos - nowNanos;
  }

  /** Nanoseconds left; negative once the deadline has passed. */
  public long remainingNanos(long nowNanos) {
    return remainingNanos(expiresAtNanos, nowNanos);
  }

  /** Whether the deadline has passed (no time left). */
  public boolean isExpired(long nowNanos) {
    return remainingNanos(nowNanos) <= 0;
  }

  /** The expiry instant in monotonic nanos. */
  public long expiresAtNanos() {
    return expiresAtNanos;
  }

  @Override
  public String toString() {
    return "Deadline[expiresAtNanos=" + expiresAtNanos + "]";
  }
}
