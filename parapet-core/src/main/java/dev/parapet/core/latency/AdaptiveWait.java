package dev.parapet.core.latency;

import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How long to wait for an origin before acting without it, from the latency it was observed to have
 * when healthy: the edge cache's {@code stale_on_slow: auto} (answer a permitted stale copy when
 * the origin is slower than this, and let the fetch finish behind the answer).
 *
 * <p><b>How it works.</b> Every successful response head (not slow, not failed: the caller feeds
 * only those) is recorded in a {@link RollingLatencyHistogram} (10 s in 5 slices), so the estimate
 * decays: samples older than the window no longer count. The estimate is the window's p95 — its
 * largest sample while it holds fewer than 20, where a p95 means nothing — recomputed at most every
 * 100 ms by the caller that finds it due (one CAS), and kept when the window empties (a quiet or
 * failing origin keeps its last known healthy latency rather than forgetting it). Once a p95 of 20
 * or more samples exists, a window holding fewer never estimates below it: the largest of a few
 * samples is far below a p95 (one sample is below the median half the time), so the first answers
 * after an outage, or on a route whose traffic the breaker is still ramping back, would make the
 * wait a fraction of the healthy one and replace a healthy origin's answers with stale copies. The
 * wait is {@code max(floor, multiplier × estimate)}. {@code 2 × p95}: a healthy answer slower than
 * that is rare (0.14 % of a lognormal latency whose p99 is 3.3 times its median), and the wait
 * stays short enough that a brownout's first requests are not held long; the floor keeps a 1 ms
 * origin's jitter from counting as slow. Before the first sample the wait is {@code noData}.
 *
 * <p><b>Overdue.</b> When a wait runs out without the origin's answer and another waiting request
 * has also reached the estimate unanswered since the last success within it ({@link
 * #onWaitRanOut}), or the caller knows otherwise ({@link #onOverdue}: the next tier answered from
 * its cache), the origin is known slow: the wait is 0 — act at once — until a success arrives as
 * fast as the origin's healthy answers were then (within the healthy wait divided by the multiplier
 * — the p95 — frozen at that moment, so a brownout's slower successes, which still feed the
 * estimate, cannot end it, nor can another tier's stale answer given after its own wait), or for at
 * most 30 s, after which a request waits again: an origin whose normal latency really changed is
 * measured anew rather than answered stale for ever. During a brownout only the first requests
 * wait; the fetches that go on behind their answers are what notices the origin's recovery. Only
 * successes feed the estimate, so a brownout's answers the caller classifies as slow or failed do
 * not stretch it. One request past its whole wait is not enough: a healthy origin's tail has such
 * answers (0.14 % of them for the lognormal above), and the overdue period would answer every
 * request then waiting with its stale copy while the origin answers them in time; a second request
 * past the estimate with no answer in time between is a one-in-14,000 event for it (0.0014 × 0.05).
 *
 * <p><b>Overdue sooner: a run past the estimate.</b> The caller also reports each waiting request
 * that reaches the estimate itself (the p95, half the wait) still unanswered ({@link
 * #onPastEstimate}). {@value #DEFAULT_QUORUM} such requests in a row, with no success within the
 * estimate between them, make the origin overdue without waiting out the rest: a healthy origin
 * answers 19 requests in 20 within its p95, so five past it with none in time between is about a
 * one-in-3-million event for it (and costs it only a few copies served stale a little early: its
 * next answer in time ends the overdue period), while a brownout produces it as soon as five
 * requests have waited the p95. That about halves how long a brownout's first requests are held.
 *
 * <p>Thread-safe and allocation-free; time is passed in (monotonic nanoseconds, compared by
 * subtraction). The caller caps the wait (the route's timeout: a longer wait would never end before
 * the request's own failure).
 */
public final class AdaptiveWait {
  /** The multiplier of the estimate, {@code 2 × p95}. */
  public static final double DEFAULT_MULTIPLIER = 2.0;

  /** The smallest wait, 20 ms. */
  public static final Duration DEFAULT_FLOOR = Duration.ofMillis(20);

  /** The wait before anything was observed, 1 s. */
  public static final Duration DEFAULT_NO_DATA = Duration.ofSeconds(1);

  /** Requests past the estimate in a row that make the origin overdue. */
  public static final int DEFAULT_QUORUM = 5;

  private static final double QUANTILE = 0.95;
  private static final int MIN_SAMPLES = 20;
  private static final long REFRESH_NANOS = 100_000_000L;
  private static final long MAX_OVERDUE_NANOS = 30_000_000_000L;
  private static final long NOT_OVERDUE = -1;

  private final RollingLatencyHistogram successes;
  private final double multiplier;
  private final long floorNanos;
  private final long noDataNanos;
  private final AtomicLong nextRefresh;
  private volatile long estimate = RollingLatencyHistogram.NO_DATA;

  /** The last p95 of a window holding at least {@link #MIN_SAMPLES}, or NO_DATA before one. */
  private volatile long fullEstimate = RollingLatencyHistogram.NO_DATA;

  /** The healthy latency when the origin became overdue, or {@link #NOT_OVERDUE}. */
  private final AtomicLong overdueWait = new AtomicLong(NOT_OVERDUE);

  private volatile long overdueSince;

  /** Waiting requests past the estimate since the last success within it. */
  private final AtomicInteger pastEstimate = new AtomicInteger();

  /**
   * @param multiplier of the estimate, in [1, 100]
   * @param floor the smallest wait, >= 0
   * @param noData the wait before the first sample, >= 0
   * @param nowNanos the current monotonic time
   */
  public AdaptiveWait(double multiplier, Duration floor, Duration noData, long nowNanos) {
    if (!(multiplier >= 1.0 && multiplier <= 100.0)) {
      throw new IllegalArgumentException("multiplier : " + multiplier + " (expected: in [1, 100])");
    }
    this.multiplier = multiplier;
    this.floorNanos = Durations.nonNegativeNanos("floor", floor);
    this.noDataNanos = Durations.nonNegativeNanos("noData", noData);
    this.successes = RollingLatencyHistogram.withDefaults(nowNanos);
    this.nextRefresh = new AtomicLong(nowNanos);
  }

  /** {@code max(20 ms, 2 × p95)}, 1 s before the first sample. */
  public static AdaptiveWait withDefaults(long nowNanos) {
    return new AdaptiveWait(DEFAULT_MULTIPLIER, DEFAULT_FLOOR, DEFAULT_NO_DATA, nowNanos);
  }

  /**
   * A successful response after {@code latencyNanos}. One as fast as the origin's healthy answers
   * were when it became overdue (the healthy wait then, divided by the multiplier) ends the overdue
   * period: it answers in time again.
   */
  public void onSuccess(long latencyNanos, long nowNanos) {
    if (latencyNanos < 0) {
      return;
    }
    long frozen = overdueWait.get();
    if (frozen >= 0 && latencyNanos <= frozen) {
      overdueWait.compareAndSet(frozen, NOT_OVERDUE);
    }
    long e = estimate;
    if (e >= 0 && latencyNanos <= e && pastEstimate.get() != 0) {
      pastEstimate.set(0); // an answer in time ends a run of requests past the estimate
    }
    successes.record(latencyNanos, nowNanos);
    if (e < 0) {
      nextRefresh.set(nowNanos); // the first sample counts at once
    }
  }

  /**
   * A waiting request has waited {@link #estimateWaitNanos} without an answer. Returns true for the
   * call that made the origin overdue — the {@value #DEFAULT_QUORUM}th such request since the last
   * success within the estimate — so its caller may release whoever is still waiting.
   */
  public boolean onPastEstimate(long nowNanos) {
    if (isOverdue(nowNanos) || pastEstimate.incrementAndGet() < DEFAULT_QUORUM) {
      return false;
    }
    pastEstimate.set(0);
    return onOverdue(nowNanos);
  }

  /**
   * A waiting request's whole wait ran out without an answer. Makes the origin overdue only when
   * another waiting request has reached the estimate unanswered too since the last success within
   * it (this request's own report at its checkpoint counts once); returns true for the call that
   * made it overdue, so its caller may release whoever is still waiting.
   */
  public boolean onWaitRanOut(long nowNanos) {
    if (isOverdue(nowNanos) || pastEstimate.get() < 2) {
      return false;
    }
    pastEstimate.set(0);
    return onOverdue(nowNanos);
  }

  /**
   * When a waiting request reports itself past the estimate: the healthy wait divided by the
   * multiplier (the p95 once there are samples), 0 while overdue.
   */
  public long estimateWaitNanos(long nowNanos) {
    return isOverdue(nowNanos) ? 0 : (long) (healthyWaitNanos(nowNanos) / multiplier);
  }

  /**
   * The origin is known slow (a wait ran out with others past the estimate, or the next tier
   * answered from its cache): do not wait, until it answers in time or for 30 s from now. Returns
   * true for the call that made the origin overdue (its caller may release whoever is still
   * waiting), false when it already was.
   */
  public boolean onOverdue(long nowNanos) {
    isOverdue(nowNanos); // an overdue period that has lasted long enough ends first
    overdueSince = nowNanos;
    long healthyLatency = (long) (healthyWaitNanos(nowNanos) / multiplier);
    return overdueWait.compareAndSet(NOT_OVERDUE, healthyLatency);
  }

  /** Whether the origin is overdue at {@code nowNanos}: then {@link #waitNanos} is 0. */
  public boolean isOverdue(long nowNanos) {
    long frozen = overdueWait.get();
    if (frozen < 0) {
      return false;
    }
    if (nowNanos - overdueSince < MAX_OVERDUE_NANOS) {
      return true;
    }
    overdueWait.compareAndSet(frozen, NOT_OVERDUE); // long enough: measure the origin again
    return false;
  }

  /** How long to wait now: 0 while overdue, else {@link #healthyWaitNanos}. */
  public long waitNanos(long nowNanos) {
    return isOverdue(nowNanos) ? 0 : healthyWaitNanos(nowNanos);
  }

  /** {@code max(floor, multiplier × estimate)}, or {@code noData} before the first sample. */
  public long healthyWaitNanos(long nowNanos) {
    long e = estimateNanos(nowNanos);
    if (e < 0) {
      return noDataNanos;
    }
    double scaled = multiplier * e;
    return Math.max(floorNanos, scaled >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) scaled);
  }

  /**
   * The healthy latency estimate: the window's p95; below 20 samples its largest sample, but not
   * less than the last p95 of a window of 20 or more; the last estimate when the window is empty;
   * {@link RollingLatencyHistogram#NO_DATA} before the first sample.
   */
  public long estimateNanos(long nowNanos) {
    long next = nextRefresh.get();
    if (nowNanos - next >= 0 && nextRefresh.compareAndSet(next, nowNanos + REFRESH_NANOS)) {
      long n = successes.count(nowNanos);
      if (n >= MIN_SAMPLES) {
        long p95 = successes.quantile(QUANTILE, nowNanos);
        fullEstimate = p95;
        estimate = p95;
      } else if (n > 0) {
        // the largest of a few samples, never below the last p95 of a full window
        estimate = Math.max(successes.quantile(1.0, nowNanos), fullEstimate);
      }
    }
    return estimate;
  }
}
