package dev.parapet.core.balance;

import org.jspecify.annotations.Nullable;

/**
 * Chooses a host for one origin attempt. Implementations skip hosts the snapshot's {@link
 * HostHealth} reports ejected, apply {@link SlowStart} to hosts that recently returned, and never
 * allocate in {@link #pick}. All methods are safe to call from many threads.
 */
public interface LoadBalancer {

  /**
   * Picks a host, or returns null when every host is ejected (the caller answers 503).
   *
   * @param nowNanos the current monotonic time, for slow start
   * @param key the affinity key for hashing balancers (a request hash for ring hash, an address
   *     hash for ip hash); ignored by round robin and least request
   */
  @Nullable Host pick(long nowNanos, long key);

  /** Swaps in a new snapshot atomically; picks in progress finish on the old one. */
  void update(HostSet hosts);

  /** The current snapshot. */
  HostSet hosts();
}
