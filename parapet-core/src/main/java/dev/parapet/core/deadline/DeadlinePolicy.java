package dev.parapet.core.deadline;

import dev.parapet.core.time.Durations;
import java.time.Duration;

/**
 * Deadline propagation across tiers (seed 001: "timeout budgets must shrink as you get closer to
 * the origin"; gRPC's deadline propagation is the model).
 *
 * <ul>
 *   <li><b>Request budget</b> = min(route timeout, incoming {@code Parapet-Deadline}): the time
 *       this hop has to answer its client. {@link #requestBudgetNanos}.
 *   <li><b>Usable time</b> = remaining - {@code reserve} (default 50 ms): what origin work may use,
 *       keeping back enough for this hop to answer (a 504, a stale copy) after an attempt times
 *       out. At the start this is the effective budget, min(route, header) - reserve. {@link
 *       #usableNanos}.
 *   <li><b>Attempt timeout</b> = min(origin attempt timeout, usable). Below {@code min_useful}
 *       (default 20 ms) the decision is {@link #EXHAUSTED}: answer 504 without calling the origin,
 *       because an attempt that cannot finish is load without benefit. {@link
 *       #attemptTimeoutNanos}. The same value, in ms, is what to send downstream as {@code
 *       Parapet-Deadline}, so edge 8 s &gt; shield &gt; connector holds by construction.
 * </ul>
 *
 * All decisions are {@code long} values; nothing is allocated.
 */
public final class DeadlinePolicy {
  /** {@link #attemptTimeoutNanos} when the deadline leaves too little for an attempt. */
  public static final long EXHAUSTED = -1L;

  private final long reserveNanos;
  private final long minUsefulNanos;

  /**
   * Creates a policy.
   *
   * @param reserve time kept back by this hop to answer, >= 0
   * @param minUseful least time worth starting an attempt with, > 0
   */
  public DeadlinePolicy(Duration reserve, Duration minUseful) {
    this.reserveNanos = Durations.nonNegativeNanos("reserve", reserve);
    this.minUsefulNanos = Durations.positiveNanos("minUseful", minUseful);
  }

  /** reserve 50 ms, min_useful 20 ms. */
  public static DeadlinePolicy withDefaults() {
    return new DeadlinePolicy(Duration.ofMillis(50), Duration.ofMillis(20));
  }

  /**
   * The time this hop has to answer: {@code min(routeTimeout, incoming)}.
   *
   * @param routeTimeoutNanos the route's timeout, > 0
   * @param incomingNanos the parsed {@code Parapet-Deadline} ({@link DeadlineHeader#parseNanos}),
   *     or {@link DeadlineHeader#ABSENT}
   */
  public static long requestBudgetNanos(long routeTimeoutNanos, long incomingNanos) {
    return incomingNanos < 0 ? routeTimeoutNanos : Math.min(routeTimeoutNanos, incomingNanos);
  }

  /** Time origin work may still use: remaining minus the reserve; may be negative. */
  public long usableNanos(long expiresAtNanos, long nowNanos) {
    long remaining = Deadline.remainingNanos(expiresAtNanos, nowNanos);
    long usable = remaining - reserveNanos;
    // reserve >= 0, so only a remaining near Long.MIN_VALUE (a deadline centuries past) can
    // overflow, and only downwards: saturate instead of wrapping to "plenty of time".
    return usable > remaining ? Long.MIN_VALUE : usable;
  }

  /**
   * The timeout for an attempt starting now, or {@link #EXHAUSTED} (answer 504, do not call).
   *
   * @param expiresAtNanos the request's deadline ({@link Deadline#expiresAtNanos()})
   * @param attemptTimeoutNanos the origin's per-attempt timeout, > 0
   */
  public long attemptTimeoutNanos(long expiresAtNanos, long attemptTimeoutNanos, long nowNanos) {
    long usable = usableNanos(expiresAtNanos, nowNanos);
    long timeout = Math.min(attemptTimeoutNanos, usable);
    return timeout < minUsefulNanos ? EXHAUSTED : timeout;
  }

  /** Whether a request with this deadline should be answered 504 now without an attempt. */
  public boolean isExhausted(long expiresAtNanos, long nowNanos) {
    return usableNanos(expiresAtNanos, nowNanos) < minUsefulNanos;
  }

  /** Time kept back by this hop. */
  public long reserveNanos() {
    return reserveNanos;
  }

  /** Least time worth starting an attempt with. */
  public long minUsefulNanos() {
    return minUsefulNanos;
  }
}
