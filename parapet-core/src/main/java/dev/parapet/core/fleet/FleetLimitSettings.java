package dev.parapet.core.fleet;

import java.time.Duration;

/**
 * How a {@link FleetLimiter} keeps to a fleet-wide ceiling.
 *
 * @param ratePerSecond the fleet-wide ceiling, tokens per second, {@code > 0}
 * @param burst tokens the shared bucket holds at most, {@code >= 1}
 * @param instances how many proxies share the bucket: each one's local share while the bucket is
 *     unreachable is {@code rate / instances} with a burst of {@code burst / instances} (at least
 *     one token)
 * @param leaseTokens tokens asked for per lease, {@code >= 1}
 * @param lowWaterTokens a new lease is asked for when fewer tokens than this are left, {@code >= 1}
 * @param timeoutNanos a lease not back within this falls back to the local share, {@code > 0}
 * @param probeIntervalNanos how often the shared bucket is asked again while falling back, or after
 *     it failed, {@code > 0}
 * @param leaseTtlNanos leased tokens unused after this are dropped (so tokens leased long ago
 *     cannot add to a later burst), {@code > 0}
 */
public record FleetLimitSettings(
    double ratePerSecond,
    int burst,
    int instances,
    int leaseTokens,
    int lowWaterTokens,
    long timeoutNanos,
    long probeIntervalNanos,
    long leaseTtlNanos) {

  /** The default time a lease may take: a few milliseconds, well above a loopback round trip. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(5);

  /** The default interval between attempts to reach the shared bucket while falling back. */
  public static final Duration DEFAULT_PROBE_INTERVAL = Duration.ofMillis(100);

  /** How long leased tokens stay usable. */
  public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(1);

  public FleetLimitSettings {
    if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
      throw new IllegalArgumentException(
          "ratePerSecond : " + ratePerSecond + " (expected: a finite number > 0)");
    }
    positive("burst", burst);
    positive("instances", instances);
    positive("leaseTokens", leaseTokens);
    positive("lowWaterTokens", lowWaterTokens);
    positive("timeoutNanos", timeoutNanos);
    positive("probeIntervalNanos", probeIntervalNanos);
    positive("leaseTtlNanos", leaseTtlNanos);
  }

  /**
   * Settings with the default lease: about 20 ms of this proxy's share, at least the tokens its
   * share spends during two timeouts (so a lease asked for at the low-water mark is back before the
   * tokens left run out), never more than its share of the burst unless that is below one lease.
   */
  public static FleetLimitSettings of(
      double ratePerSecond, int burst, int instances, Duration timeout) {
    long timeoutNanos = timeout.toNanos();
    int lowWater = defaultLowWater(ratePerSecond, instances, timeoutNanos);
    return of(
        ratePerSecond,
        burst,
        instances,
        timeout,
        defaultLease(ratePerSecond, instances, timeoutNanos),
        lowWater);
  }

  /** Settings with an explicit lease size; the low-water mark is half a lease (at least one). */
  public static FleetLimitSettings of(
      double ratePerSecond, int burst, int instances, Duration timeout, int leaseTokens) {
    return of(
        ratePerSecond,
        burst,
        instances,
        timeout,
        leaseTokens,
        Math.max(
            1,
            Math.min(leaseTokens, defaultLowWater(ratePerSecond, instances, timeout.toNanos()))));
  }

  private static FleetLimitSettings of(
      double ratePerSecond,
      int burst,
      int instances,
      Duration timeout,
      int leaseTokens,
      int lowWater) {
    return new FleetLimitSettings(
        ratePerSecond,
        burst,
        instances,
        leaseTokens,
        lowWater,
        timeout.toNanos(),
        DEFAULT_PROBE_INTERVAL.toNanos(),
        DEFAULT_LEASE_TTL.toNanos());
  }

  /** The default lease size for a ceiling shared by {@code instances} proxies. */
  public static int defaultLease(double ratePerSecond, int instances, long timeoutNanos) {
    double share = ratePerSecond / instances;
    long twentyMs = (long) Math.ceil(share * 0.020);
    return (int)
        Math.max(
            1,
            Math.min(
                100_000,
                Math.max(twentyMs, 2L * defaultLowWater(ratePerSecond, instances, timeoutNanos))));
  }

  private static int defaultLowWater(double ratePerSecond, int instances, long timeoutNanos) {
    double share = ratePerSecond / instances;
    return (int) Math.max(1, Math.min(50_000, Math.ceil(share * 2 * timeoutNanos / 1e9)));
  }

  /** This proxy's share of the rate while falling back: {@code rate / instances}. */
  public double localRatePerSecond() {
    return ratePerSecond / instances;
  }

  /** This proxy's share of the burst while falling back: {@code burst / instances}, at least 1. */
  public int localBurst() {
    return Math.max(1, burst / instances);
  }

  /** A copy with another probe interval. */
  public FleetLimitSettings withProbeInterval(Duration interval) {
    return new FleetLimitSettings(
        ratePerSecond,
        burst,
        instances,
        leaseTokens,
        lowWaterTokens,
        timeoutNanos,
        interval.toNanos(),
        leaseTtlNanos);
  }

  private static void positive(String name, long value) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + " : " + value + " (expected: > 0)");
    }
  }
}
