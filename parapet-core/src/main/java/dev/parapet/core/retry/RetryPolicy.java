package dev.parapet.core.retry;

import dev.parapet.core.time.Durations;
import dev.parapet.core.time.RandomSource;
import java.time.Duration;

/**
 * Decides whether a failed attempt is retried, and after how long.
 *
 * <p>Rules, checked in this order (DESIGN "Retries"; seeds 000, 002, 004):
 *
 * <ol>
 *   <li>A local rejection (open breaker, shed, pool full) is never retried: it says nothing new
 *       about the origin, and retrying it is how a breaker's protection gets undone (seed 002).
 *   <li>At most {@code maxAttempts} attempts in total (default 2: one retry).
 *   <li>Delay = max(backoff, Retry-After). Backoff is exponential with full jitter (AWS
 *       Architecture Blog, "Exponential Backoff and Jitter"): uniform in {@code [0, min(max, base *
 *       2^(retry - 1))]}, base 25 ms, max 250 ms, drawn from the injected {@link RandomSource}, so
 *       a fleet of callers never retries in lockstep. An upstream Retry-After is honoured even
 *       beyond {@code max}: the origin asked for it.
 *   <li>The retry must fit the deadline: refused unless {@code remaining - delay >= minUseful}
 *       (default 20 ms, the deadline's {@code min_useful}); a retry that cannot finish is load
 *       without benefit.
 *   <li>It must get a place in the {@link ExtraLoadBudget} (checked last so that refusals for other
 *       reasons never touch the shared counters).
 * </ol>
 *
 * <p>{@link #decide} returns a {@code long}: the delay in nanoseconds ({@code >= 0}) when the retry
 * goes ahead — with its budget place held in the caller's {@link BudgetSlot}, to be released when
 * the retry attempt ends — or a negative {@link RetryRefusal#code()}. Nothing is allocated. Whether
 * the failure is retryable at all (idempotent method, {@code retry.on} classes) is the caller's
 * decision, made before asking.
 */
public final class RetryPolicy {
  private final int maxAttempts;
  private final long baseNanos;
  private final long maxBackoffNanos;
  private final long minUsefulNanos;
  private final RandomSource random;
  private final ExtraLoadBudget budget;

  /**
   * Creates a policy.
   *
   * @param maxAttempts attempts in total, including the first, >= 1
   * @param base backoff ceiling of the first retry, > 0
   * @param maxBackoff largest backoff ceiling, >= base
   * @param minUseful least time an attempt must have left after the delay, >= 0
   */
  public RetryPolicy(
      int maxAttempts,
      Duration base,
      Duration maxBackoff,
      Duration minUseful,
      RandomSource random,
      ExtraLoadBudget budget) {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts : " + maxAttempts + " (expected: >= 1)");
    }
    this.baseNanos = Durations.positiveNanos("base", base);
    this.maxBackoffNanos = Durations.positiveNanos("maxBackoff", maxBackoff);
    if (maxBackoffNanos < baseNanos) {
      throw new IllegalArgumentException(
          "maxBackoff : " + maxBackoff + " (expected: >= base " + base + ")");
    }
    this.minUsefulNanos = Durations.nonNegativeNanos("minUseful", minUseful);
    this.maxAttempts = maxAttempts;
    this.random = random;
    this.budget = budget;
  }

  /** 2 attempts, backoff 25 ms up to 250 ms, 20 ms minimum useful time. */
  public static RetryPolicy withDefaults(RandomSource random, ExtraLoadBudget budget) {
    return new RetryPolicy(
        2, Duration.ofMillis(25), Duration.ofMillis(250), Duration.ofMillis(20), random, budget);
  }

  /** Whether a decision is a go (a delay) rather than a refusal. */
  public static boolean isRetry(long decision) {
    return decision >= 0;
  }

  /**
   * The backoff ceiling before retry number {@code retry} (1 for the first retry): {@code min(max,
   * base * 2^(retry - 1))}, without overflow.
   */
  public long backoffCeilingNanos(int retry) {
    int shift = Math.max(0, retry - 1);
    if (shift >= 62 || baseNanos > (maxBackoffNanos >> shift)) {
      return maxBackoffNanos;
    }
    return baseNanos << shift;
  }

  /** A full-jitter backoff before retry number {@code retry}: uniform in [0, ceiling]. */
  public long backoffNanos(int retry) {
    return random.nextLong(backoffCeilingNanos(retry) + 1);
  }

  /**
   * Decides the retry after a failed attempt.
   *
   * @param attemptsMade attempts already made for this request, >= 1
   * @param localRejection whether the failure was generated locally (never retried)
   * @param retryAfterNanos the origin's Retry-After ({@link RetryAfter#parseNanos}) or {@link
   *     RetryAfter#ABSENT}
   * @param remainingNanos what the request's deadline still allows for origin work (for example
   *     {@code DeadlinePolicy.usableNanos}); {@code Long.MAX_VALUE} when there is no deadline
   * @param slot the request's slot; on a go it holds a budget place until released
   * @return the delay in nanoseconds ({@code >= 0}), or a negative {@link RetryRefusal#code()}
   */
  public long decide(
      int attemptsMade,
      boolean localRejection,
      long retryAfterNanos,
      long remainingNanos,
      BudgetSlot slot) {
    if (localRejection) {
      return RetryRefusal.LOCAL_REJECTION.code();
    }
    if (attemptsMade >= maxAttempts) {
      return RetryRefusal.ATTEMPTS_EXHAUSTED.code();
    }
    long delay = Math.max(backoffNanos(attemptsMade), retryAfterNanos);
    if (remainingNanos < minUsefulNanos || remainingNanos - minUsefulNanos < delay) {
      return RetryRefusal.DEADLINE.code();
    }
    if (!budget.tryRetry(slot)) {
      return RetryRefusal.BUDGET.code();
    }
    return delay;
  }

  /** Attempts in total, including the first. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** The extra-load budget retries draw from. */
  public ExtraLoadBudget budget() {
    return budget;
  }
}
