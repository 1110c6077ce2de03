package dev.parapet.core.outlier;

import dev.parapet.core.balance.HostHealth;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Passive outlier detection for one origin pool, with Envoy's outlier-detection semantics ({@code
 * envoy.config.cluster.v3.OutlierDetection}, non-split mode):
 *
 * <ul>
 *   <li><b>Consecutive 5xx</b>: {@code consecutive5xx} 5xx responses in a row eject the host at
 *       once. A connect failure counts as a 5xx (Envoy maps it to 503); any other response resets
 *       the run.
 *   <li><b>Consecutive gateway failures</b>: the same for 502/503/504 and connect failures; a
 *       non-gateway 5xx resets this run but not the 5xx run.
 *   <li><b>Failure percentage</b>: at each interval end, every available host with at least {@code
 *       minRequests} requests in the interval and a failure fraction of at least {@code
 *       failurePercentage} is ejected.
 *   <li><b>Ejection time</b>: {@code min(base × multiplier, max)}. Each ejection raises the host's
 *       multiplier by one (while {@code base × multiplier < max}); each interval end at which the
 *       host is available lowers it by one, so a host that stays healthy is forgiven step by step
 *       (Envoy's {@code ejectTimeBackoff}).
 *   <li><b>Max ejected</b>: an ejection that would make more than {@code maxEjectedFraction} of the
 *       hosts ejected does not happen; a {@link OutlierEvent.Kind#EJECTION_SKIPPED} event says so.
 *       (Envoy since 1.21 always allows one ejection; here the ceiling is strict.)
 *   <li><b>Return</b>: {@link #advance(long)} returns hosts whose ejection time is up. Envoy checks
 *       only at interval ends; here every {@code advance} call does, so call it as often as a
 *       return should be noticed (the proxy: once a second) and at least once per interval.
 * </ul>
 *
 * <p>Recording is allocation-free and lock-free: per-host atomics for the runs and one packed
 * {@code requests << 32 | failures} counter per host for the interval. Only state changes (eject,
 * return, interval end) take the detector's lock; they are rare. Hosts are addressed by their index
 * in the pool's host list; a new host list gets a new detector.
 */
public final class OutlierDetector implements HostHealth {
  // Host states; 0 (the initial value) is "available, never ejected".
  private static final int EJECTED = 1;
  private static final int RETURNED = 2;
  private static final long ONE_REQUEST = 1L << 32;
  private static final long ONE_FAILURE = ONE_REQUEST | 1L;

  private final OutlierConfig config;
  private final OutlierListener listener;
  private final int hostCount;
  private final int maxEjectedHosts;

  private final AtomicIntegerArray run5xx;
  private final AtomicIntegerArray runGateway;
  private final AtomicLongArray intervalCounts;
  // Written under lock, read lock-free by balancers.
  private final AtomicIntegerArray state;
  private final AtomicLongArray returnedAt;
  // Only written under lock; volatile so balancers see changes without taking it.
  private volatile long generation;

  // Guarded by lock.
  private final Object lock = new Object();
  private final long[] ejectedUntil;
  private final int[] multiplier;
  private int ejectedHosts;
  private long nextIntervalEnd;
  private long listenerFailures;

  /**
   * A detector for a pool of {@code hostCount} hosts whose first interval starts at {@code
   * nowNanos}.
   */
  public OutlierDetector(
      int hostCount, OutlierConfig config, OutlierListener listener, long nowNanos) {
    if (hostCount < 0) {
      throw new IllegalArgumentException("hostCount : " + hostCount + " (expected: >= 0)");
    }
    this.config = config;
    this.listener = listener;
    this.hostCount = hostCount;
    // Epsilon: 0.5 * 10 must give 5 even if the fraction came from a percentage in YAML.
    this.maxEjectedHosts = (int) Math.floor(config.maxEjectedFraction() * hostCount + 1e-9);
    this.run5xx = new AtomicIntegerArray(hostCount);
    this.runGateway = new AtomicIntegerArray(hostCount);
    this.intervalCounts = new AtomicLongArray(hostCount);
    this.state = new AtomicIntegerArray(hostCount);
    this.returnedAt = new AtomicLongArray(hostCount);
    this.ejectedUntil = new long[hostCount];
    this.multiplier = new int[hostCount];
    this.nextIntervalEnd = nowNanos + config.intervalNanos();
  }

  public OutlierConfig config() {
    return config;
  }

  // ---- recording (hot path) ----

  /**
   * Records a response with HTTP status {@code status} from {@code host}: 5xx count as failures,
   * 502/503/504 also as gateway failures, everything else as success. A timeout waiting for the
   * response should be recorded as 504, as Envoy does.
   */
  public void recordStatus(int host, int status, long nowNanos) {
    if (status >= 500 && status <= 599) {
      recordFailure(host, status >= 502 && status <= 504, nowNanos);
    } else {
      recordSuccess(host);
    }
  }

  /** Records a successful exchange (any non-5xx response). */
  public void recordSuccess(int host) {
    intervalCounts.getAndAdd(host, ONE_REQUEST);
    // Plain reads first: most successes find the runs already at zero and skip the write.
    if (run5xx.get(host) != 0) {
      run5xx.set(host, 0);
    }
    if (runGateway.get(host) != 0) {
      runGateway.set(host, 0);
    }
  }

  /** Records a failure to connect (refused, reset, connect timeout): a gateway failure. */
  public void recordConnectFailure(int host, long nowNanos) {
    recordFailure(host, true, nowNanos);
  }

  private void recordFailure(int host, boolean gateway, long nowNanos) {
    intervalCounts.getAndAdd(host, ONE_FAILURE);
    int gatewayThreshold = config.consecutiveGatewayFailures();
    if (gateway) {
      if (runGateway.incrementAndGet(host) == gatewayThreshold) {
        onRun(host, EjectionReason.CONSECUTIVE_GATEWAY_FAILURE, nowNanos);
      }
    } else if (runGateway.get(host) != 0) {
      runGateway.set(host, 0);
    }
    if (run5xx.incrementAndGet(host) == config.consecutive5xx()) {
      onRun(host, EjectionReason.CONSECUTIVE_5XX, nowNanos);
    }
  }

  /** A run reached its threshold (exactly one recorder sees that); reset it and try to eject. */
  private void onRun(int host, EjectionReason reason, long nowNanos) {
    synchronized (lock) {
      // A refused or completed ejection restarts the count, so the next full run tries again.
      run5xx.set(host, 0);
      runGateway.set(host, 0);
      if (state.get(host) != EJECTED) {
        tryEject(host, reason, nowNanos);
      }
    }
  }

  // ---- time ----

  /**
   * Returns hosts whose ejection time is up, and at each interval end evaluates the failure
   * percentage, decays multipliers and starts a new interval. Cheap when nothing is due.
   */
  public void advance(long nowNanos) {
    synchronized (lock) {
      boolean intervalEnded = nowNanos - nextIntervalEnd >= 0;
      for (int i = 0; i < hostCount; i++) {
        if (state.get(i) == EJECTED) {
          if (nowNanos - ejectedUntil[i] >= 0) {
            returnHost(i, nowNanos);
          }
        } else if (intervalEnded && multiplier[i] > 0) {
          multiplier[i]--;
        }
      }
      if (intervalEnded) {
        endInterval(nowNanos);
        nextIntervalEnd = nowNanos + config.intervalNanos();
      }
    }
  }

  private void endInterval(long nowNanos) {
    double threshold = config.failurePercentage();
    int minRequests = config.minRequests();
    for (int i = 0; i < hostCount; i++) {
      long packed = intervalCounts.getAndSet(i, 0L);
      long requests = packed >>> 32;
      long failures = packed & 0xffff_ffffL;
      if (state.get(i) != EJECTED && requests >= minRequests && failures >= threshold * requests) {
        tryEject(i, EjectionReason.FAILURE_PERCENTAGE, nowNanos);
      }
    }
  }

  // ---- state changes, under lock ----

  @SuppressWarnings("NonAtomicVolatileUpdate") // single writer: under lock
  private void tryEject(int host, EjectionReason reason, long nowNanos) {
    if (ejectedHosts + 1 > maxEjectedHosts) {
      emit(OutlierEvent.Kind.EJECTION_SKIPPED, host, reason, 0L, nowNanos);
      return;
    }
    long base = config.baseEjectionNanos();
    long max = config.maxEjectionNanos();
    if (base * multiplier[host] < max) {
      multiplier[host]++;
    }
    long duration = Math.min(base * multiplier[host], max);
    ejectedUntil[host] = nowNanos + duration;
    ejectedHosts++;
    state.set(host, EJECTED);
    generation++;
    emit(OutlierEvent.Kind.EJECTED, host, reason, duration, nowNanos);
  }

  @SuppressWarnings("NonAtomicVolatileUpdate") // single writer: under lock
  private void returnHost(int host, long nowNanos) {
    ejectedHosts--;
    returnedAt.set(host, nowNanos);
    state.set(host, RETURNED);
    run5xx.set(host, 0);
    runGateway.set(host, 0);
    generation++;
    emit(OutlierEvent.Kind.RETURNED, host, EjectionReason.RETURNED, 0L, nowNanos);
  }

  private void emit(
      OutlierEvent.Kind kind, int host, EjectionReason reason, long durationNanos, long nowNanos) {
    OutlierEvent event =
        new OutlierEvent(
            kind, host, reason, multiplier[host], durationNanos, ejectedHosts, hostCount, nowNanos);
    try {
      listener.onEvent(event);
    } catch (RuntimeException e) {
      // A broken listener must not break ejection; it is counted for the admin API.
      listenerFailures++;
    }
  }

  // ---- reads ----

  @Override
  public boolean isEjected(int host) {
    return state.get(host) == EJECTED;
  }

  @Override
  public boolean hasReturned(int host) {
    return state.get(host) == RETURNED;
  }

  @Override
  public long returnedAtNanos(int host) {
    return returnedAt.get(host);
  }

  @Override
  public long generation() {
    return generation;
  }

  /** Number of hosts in the pool. */
  public int hostCount() {
    return hostCount;
  }

  /** Hosts ejected now (the {@code parapet_ejected_hosts} gauge). */
  public int ejectedHosts() {
    synchronized (lock) {
      return ejectedHosts;
    }
  }

  /** The largest number of hosts that may be ejected at once. */
  public int maxEjectedHosts() {
    return maxEjectedHosts;
  }

  /** The host's current ejection multiplier (0 once fully forgiven). */
  public int ejectionMultiplier(int host) {
    synchronized (lock) {
      return multiplier[host];
    }
  }

  /**
   * How long the host stays ejected from {@code nowNanos} (0 when it is not ejected or its time is
   * up and the next {@link #advance} will return it): for the admin API.
   */
  public long remainingEjectionNanos(int host, long nowNanos) {
    synchronized (lock) {
      if (state.get(host) != EJECTED) {
        return 0L;
      }
      return Math.max(0L, ejectedUntil[host] - nowNanos);
    }
  }

  /** Listener calls that threw. */
  public long listenerFailures() {
    synchronized (lock) {
      return listenerFailures;
    }
  }
}
