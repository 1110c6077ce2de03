package dev.parapet.core.fleet;

import dev.parapet.core.time.Ticker;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * A fleet-wide ceiling on one origin's attempts, kept by every proxy of the fleet together, that a
 * request never waits for and that fails open.
 *
 * <pre>
 * tryAcquire ─► SHARED: take a leased token ──── fewer than low-water left? ─► ask the source for
 *      │                (none left: refused)                                   a lease of N tokens
 *      │                                                                       (one at a time)
 *      └──────► LOCAL_FALLBACK: take from the local bucket (rate / instances, burst / instances)
 *
 * lease back within the timeout ─► its tokens are added; LOCAL_FALLBACK ─► SHARED
 * lease late (or still out when the timeout passes), or failed ─► SHARED ─► LOCAL_FALLBACK;
 *      the source is asked again every probe interval
 * </pre>
 *
 * <p>The shared bucket (a {@link LeaseSource}: one Redis key in the proxy) holds the ceiling's
 * tokens; each proxy takes them in leases of several tokens, asked for ahead of need when its lease
 * drops below a low-water mark, so the request path only decrements a counter. Tokens are taken
 * from the shared bucket before they are spent, so the fleet never spends more than the bucket gave
 * out; what a proxy still holds (at most a lease and the low-water mark) moves the ceiling's window
 * by that much, and leased tokens unused after {@link FleetLimitSettings#leaseTtlNanos()} are
 * dropped. A lease that comes back with fewer tokens than asked means the ceiling is reached: the
 * limiter refuses until the source said the rest could be there ({@link Lease#waitNanos()}),
 * without asking in between.
 *
 * <p>The shared bucket is an optional dependency, never a reason to fail: when a lease is not back
 * within the timeout, or fails, the limiter falls back to a local bucket of {@code rate /
 * instances} (so a fleet of {@code instances} proxies together keep to about the ceiling) and says
 * so through {@link #mode()} and its {@link FleetLimitListener}. It keeps asking the source every
 * probe interval and goes back to the shared bucket on the first lease back in time: a source that
 * answers, but always late, keeps it local rather than flapping.
 *
 * <p>Thread-safe and lock-free: request threads take tokens, the source completes on its own
 * thread, {@link #tick} runs on a timer (it notices a lease that is late when no request comes, and
 * probes while falling back). Only the compare-and-set winner of a mode change tells the listener.
 * Time comes from the injected {@link Ticker} (for the source's callbacks) or is passed in;
 * readings are compared by subtraction.
 */
public final class FleetLimiter {
  /** A lease still out after this is forgotten, so a source that never answers is asked again. */
  private static final long ABANDON_NANOS = 1_000_000_000L;

  /** The longest a "bucket low" answer keeps the limiter from asking. */
  private static final long MAX_WAIT_NANOS = 100_000_000L;

  private final FleetLimitSettings settings;
  private final LeaseSource source;
  private final Ticker ticker;
  private final FleetLimitListener listener;
  private final LocalTokenBucket local;

  private final AtomicReference<FleetMode> mode = new AtomicReference<>(FleetMode.SHARED);
  private final AtomicLong leased = new AtomicLong();
  private volatile long leaseExpiresAt;
  private final AtomicReference<@Nullable Fetch> inFlight = new AtomicReference<>();
  private volatile long nextFetchAt;

  private final LongAdder grantedShared = new LongAdder();
  private final LongAdder grantedLocal = new LongAdder();
  private final LongAdder refused = new LongAdder();
  private final LongAdder leases = new LongAdder();
  private final LongAdder leasedTokens = new LongAdder();
  private final LongAdder sourceErrors = new LongAdder();
  private final LongAdder sourceTimeouts = new LongAdder();

  /** A lease asked for: when, and whether its lateness was already counted. */
  private static final class Fetch {
    final long startedAt;
    final int asked;
    final AtomicBoolean late = new AtomicBoolean();

    Fetch(long startedAt, int asked) {
      this.startedAt = startedAt;
      this.asked = asked;
    }
  }

  /**
   * A limiter in {@link FleetMode#SHARED} mode holding no tokens; the first {@link #tick} or {@link
   * #tryAcquire} asks for a lease.
   */
  public FleetLimiter(
      FleetLimitSettings settings, LeaseSource source, Ticker ticker, FleetLimitListener listener) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.source = Objects.requireNonNull(source, "source");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.listener = Objects.requireNonNull(listener, "listener");
    long now = ticker.read();
    this.local = new LocalTokenBucket(settings.localRatePerSecond(), settings.localBurst(), now);
    this.leaseExpiresAt = now;
    this.nextFetchAt = now;
  }

  /**
   * Takes a token for one attempt at the origin: true when it may go, false when the ceiling is
   * reached. Never waits; may ask the source for the next lease (which returns at once).
   */
  public boolean tryAcquire(long nowNanos) {
    boolean ok;
    if (mode.get() == FleetMode.SHARED) {
      ok = takeLeased(nowNanos);
      maintain(nowNanos);
      if (ok) {
        grantedShared.increment();
        return true;
      }
      if (mode.get() == FleetMode.SHARED) {
        refused.increment();
        return false;
      }
      // The lease this request found missing was late: the local share answers from now on.
    }
    ok = local.tryAcquire(nowNanos);
    maintain(nowNanos);
    if (ok) {
      grantedLocal.increment();
    } else {
      refused.increment();
    }
    return ok;
  }

  /**
   * Housekeeping when no request comes: notices a late lease, refills ahead of need, probes the
   * source while falling back. Call it every few milliseconds to a few hundred; never blocks.
   */
  public void tick(long nowNanos) {
    maintain(nowNanos);
  }

  /** Where tokens come from now. */
  public FleetMode mode() {
    FleetMode m = mode.get();
    return m == null ? FleetMode.SHARED : m;
  }

  public FleetLimitSettings settings() {
    return settings;
  }

  /**
   * How long a refused caller should wait before it could get a token, in nanoseconds: the local
   * bucket's wait while falling back; while shared, when the limiter next asks the source (at least
   * one emission interval of the fleet's rate).
   */
  public long retryAfterNanos(long nowNanos) {
    if (mode.get() == FleetMode.LOCAL_FALLBACK) {
      return local.waitNanos(nowNanos);
    }
    long interval = (long) Math.ceil(1e9 / settings.ratePerSecond());
    return Math.max(interval, nextFetchAt - nowNanos);
  }

  /** Counters since the limiter was made, for metrics. */
  public Stats stats() {
    return new Stats(
        grantedShared.sum(),
        grantedLocal.sum(),
        refused.sum(),
        leases.sum(),
        leasedTokens.sum(),
        sourceErrors.sum(),
        sourceTimeouts.sum(),
        Math.max(0, leased.get()));
  }

  /**
   * What the limiter did so far.
   *
   * @param grantedShared tokens granted from leases of the shared bucket
   * @param grantedLocal tokens granted from the local share while falling back
   * @param refused attempts refused: the ceiling (or the local share) was reached
   * @param leases leases that came back
   * @param leasedTokens tokens those leases carried
   * @param sourceErrors leases that failed
   * @param sourceTimeouts leases not back within the timeout (late or never)
   * @param held leased tokens held now
   */
  public record Stats(
      long grantedShared,
      long grantedLocal,
      long refused,
      long leases,
      long leasedTokens,
      long sourceErrors,
      long sourceTimeouts,
      long held) {
    /** Every token granted, shared and local. */
    public long granted() {
      return grantedShared + grantedLocal;
    }
  }

  // ---------------------------------------------------------------------------------------------

  private boolean takeLeased(long now) {
    if (now - leaseExpiresAt >= 0 && leased.get() > 0) {
      // Unused for a whole lease lifetime. A lease landing at this very moment may be dropped with
      // them: that errs below the ceiling, never above it.
      leased.set(0);
    }
    while (true) {
      long n = leased.get();
      if (n <= 0) {
        return false;
      }
      if (leased.compareAndSet(n, n - 1)) {
        return true;
      }
    }
  }

  /** Late lease → fallback; below low water (or probing) → ask for the next lease. */
  private void maintain(long now) {
    Fetch f = inFlight.get();
    if (f != null) {
      long out = now - f.startedAt;
      if (out > settings.timeoutNanos() && f.late.compareAndSet(false, true)) {
        sourceTimeouts.increment();
        fallBack(
            "lease not back within "
                + millis(settings.timeoutNanos())
                + " (out "
                + millis(out)
                + ")",
            now);
      }
      if (out < ABANDON_NANOS || !inFlight.compareAndSet(f, null)) {
        return;
      }
      nextFetchAt = now; // never answered: ask again
    }
    if (now - nextFetchAt < 0) {
      return;
    }
    boolean wanted =
        mode.get() == FleetMode.LOCAL_FALLBACK
            || leased.get() < settings.lowWaterTokens()
            || now - leaseExpiresAt >= 0;
    if (wanted) {
      fetch(now);
    }
  }

  private void fetch(long now) {
    Fetch f = new Fetch(now, settings.leaseTokens());
    if (!inFlight.compareAndSet(null, f)) {
      return; // another thread asks
    }
    CompletionStage<Lease> answer;
    try {
      answer = source.lease(f.asked);
    } catch (RuntimeException e) {
      failed(f, e);
      return;
    }
    answer.whenComplete((lease, error) -> {
      if (error != null || lease == null) {
        failed(f, error);
      } else {
        answered(f, lease);
      }
    });
  }

  private void answered(Fetch f, Lease lease) {
    long now = ticker.read();
    leases.increment();
    long took = now - f.startedAt;
    boolean inTime = took <= settings.timeoutNanos();
    if (inTime && lease.granted() > 0) {
      if (mode.get() == FleetMode.LOCAL_FALLBACK || now - leaseExpiresAt >= 0) {
        // Tokens held from before the fallback are stale: the local share was spent in their place,
        // and reviving them on return would add them to the fleet's window a second time.
        leased.set(0);
      }
      leasedTokens.add(lease.granted());
      leaseExpiresAt = now + settings.leaseTtlNanos();
      leased.addAndGet(lease.granted());
    }
    // A late lease's tokens are dropped: the local share answers meanwhile, and spending both would
    // exceed the ceiling. That errs below it, never above.
    if (lease.granted() < f.asked) {
      // The ceiling is reached: not before the bucket could have the rest (bounded, so a wrong
      // answer cannot silence the limiter for long).
      nextFetchAt = now + Math.min(MAX_WAIT_NANOS, Math.max(lease.waitNanos(), 1));
    }
    if (!inTime && f.late.compareAndSet(false, true)) {
      sourceTimeouts.increment();
    }
    if (inTime) {
      if (mode.compareAndSet(FleetMode.LOCAL_FALLBACK, FleetMode.SHARED)) {
        listener.modeChanged(
            FleetMode.LOCAL_FALLBACK,
            FleetMode.SHARED,
            "lease back in " + millis(took) + " (timeout " + millis(settings.timeoutNanos()) + ")",
            now);
      }
    } else {
      fallBack(
          "lease back late, in "
              + millis(took)
              + " (timeout "
              + millis(settings.timeoutNanos())
              + ")",
          now);
      nextFetchAt = now + settings.probeIntervalNanos();
    }
    inFlight.compareAndSet(f, null);
  }

  private void failed(Fetch f, @Nullable Throwable error) {
    long now = ticker.read();
    sourceErrors.increment();
    nextFetchAt = now + settings.probeIntervalNanos();
    fallBack("lease failed: " + describe(error), now);
    inFlight.compareAndSet(f, null);
  }

  private void fallBack(String reason, long now) {
    if (mode.compareAndSet(FleetMode.SHARED, FleetMode.LOCAL_FALLBACK)) {
      listener.modeChanged(FleetMode.SHARED, FleetMode.LOCAL_FALLBACK, reason, now);
    }
  }

  private static String describe(@Nullable Throwable t) {
    Throwable c = t;
    while (c != null && c.getCause() != null && c.getMessage() == null) {
      c = c.getCause();
    }
    if (c == null) {
      return "no answer";
    }
    return c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
  }

  private static String millis(long nanos) {
    long tenths = nanos / 100_000;
    return (tenths / 10) + "." + (tenths % 10) + "ms";
  }

  @Override
  public String toString() {
    return "FleetLimiter[" + mode.get() + ", held=" + leased.get() + "]";
  }
}
