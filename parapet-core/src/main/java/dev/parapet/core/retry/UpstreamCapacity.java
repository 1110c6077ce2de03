package dev.parapet.core.retry;

import dev.parapet.core.time.Durations;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * What the next tier said about its own capacity, and how much extra load (retries, hedges,
 * background refreshes) it gets while it says it is degraded. Seed 003: a tier that sheds says so
 * in a header internal layers can act on ({@code CDN-Capacity: degraded; q=0.12}), "so retry logic
 * has something deterministic to act on instead of guessing from latency".
 *
 * <p>A signal ({@link #signal}) holds for the response's {@code Retry-After} when it has one (at
 * most {@code maxHold}), else for {@code hold}; each new signal extends it and replaces {@code q}.
 * While it holds, every request that starts earns {@code q} of a credit, and each extra attempt
 * spends one: extra load is at most {@code q} per request — none at {@code q = 0}, the value a shed
 * carries — instead of the budget's usual share. When the hold ends the credits are dropped and the
 * usual budgets alone apply again. First attempts are never refused here: the tier behind said it
 * is degraded, not down, and its own admission control decides what it serves.
 *
 * <p>Thread-safe. The common path (nothing said) is one volatile read.
 */
public final class UpstreamCapacity {
  /** The most credit that may pile up while degraded: a burst of this many extra attempts. */
  private static final double MAX_CREDIT = 4.0;

  private final long holdNanos;
  private final long maxHoldNanos;

  /** Whether any signal has been heard (until is meaningless before). */
  private volatile boolean heard;

  private volatile long untilNanos;
  private double q;
  private double credit;
  private long signals;
  private long refused;

  /**
   * @param hold how long a signal without {@code Retry-After} holds, > 0
   * @param maxHold the longest a {@code Retry-After} may make it hold, ≥ hold
   */
  public UpstreamCapacity(Duration hold, Duration maxHold) {
    this.holdNanos = Durations.positiveNanos("hold", hold);
    this.maxHoldNanos = Durations.positiveNanos("maxHold", maxHold);
    if (maxHoldNanos < holdNanos) {
      throw new IllegalArgumentException(
          "maxHold : " + maxHold + " (expected: at least hold, " + hold + ")");
    }
  }

  /**
   * The value of a capacity header ({@code degraded; q=0.12; ...} or {@code shed; ...}): the share
   * {@code q} in [0, 1] of extra load the tier still takes (0 when it names none), or -1 when the
   * value does not say degraded or shed (or is absent or unreadable).
   */
  public static double parse(@Nullable CharSequence value) {
    if (value == null) {
      return -1;
    }
    int n = value.length();
    int i = skipSpaces(value, 0);
    int end = i;
    while (end < n && value.charAt(end) != ';' && value.charAt(end) != ' ') {
      end++;
    }
    String state = value.subSequence(i, end).toString();
    if (!state.equalsIgnoreCase("degraded") && !state.equalsIgnoreCase("shed")) {
      return -1;
    }
    double q = 0;
    while (end < n) {
      int p = skipSpaces(value, end + 1);
      int stop = p;
      while (stop < n && value.charAt(stop) != ';') {
        stop++;
      }
      if (stop - p > 2 && (value.charAt(p) == 'q' || value.charAt(p) == 'Q')) {
        int eq = skipSpaces(value, p + 1);
        if (eq < stop && value.charAt(eq) == '=') {
          q = parseShare(value.subSequence(eq + 1, stop).toString().trim());
        }
      }
      end = stop;
    }
    return q;
  }

  private static double parseShare(String s) {
    try {
      double v = Double.parseDouble(s);
      return Double.isNaN(v) ? 0 : Math.max(0, Math.min(1, v));
    } catch (NumberFormatException e) {
      return 0; // an unreadable share is read as the cautious one
    }
  }

  private static int skipSpaces(CharSequence v, int i) {
    while (i < v.length() && (v.charAt(i) == ' ' || v.charAt(i) == '\t')) {
      i++;
    }
    return i;
  }

  /**
   * The tier said it is degraded.
   *
   * @param q the share of extra load it still takes, in [0, 1]
   * @param retryAfterNanos its {@code Retry-After}, or negative for none
   */
  public void signal(double q, long retryAfterNanos, long nowNanos) {
    long hold = retryAfterNanos > 0 ? Math.min(retryAfterNanos, maxHoldNanos) : holdNanos;
    long until = nowNanos + hold;
    synchronized (this) {
      signals++;
      if (!isDegraded(nowNanos)) {
        credit = 0; // a new episode starts without credit
        untilNanos = until;
      } else if (until - untilNanos > 0) {
        untilNanos = until;
      }
      this.q = Math.max(0, Math.min(1, q));
      heard = true;
    }
  }

  /** Whether a signal holds at {@code nowNanos}. */
  public boolean isDegraded(long nowNanos) {
    return heard && nowNanos - untilNanos < 0;
  }

  /** Counts a request that started toward the tier: while degraded, it earns {@code q} credit. */
  public void requestStarted(long nowNanos) {
    if (!isDegraded(nowNanos)) {
      return;
    }
    synchronized (this) {
      credit = Math.min(MAX_CREDIT, credit + q);
    }
  }

  /**
   * Whether one extra attempt (a retry, a hedge, a background refresh) may go to the tier now;
   * always true while no signal holds.
   */
  public boolean tryExtra(long nowNanos) {
    if (!isDegraded(nowNanos)) {
      return true;
    }
    synchronized (this) {
      if (credit >= 1) {
        credit -= 1;
        return true;
      }
      refused++;
      return false;
    }
  }

  /** The share last signalled (meaningful while degraded). */
  public synchronized double share() {
    return q;
  }

  /** Signals heard since creation. */
  public synchronized long signals() {
    return signals;
  }

  /** Extra attempts refused since creation. */
  public synchronized long refused() {
    return refused;
  }
}
