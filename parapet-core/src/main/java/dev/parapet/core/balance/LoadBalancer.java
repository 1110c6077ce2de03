package dev.parapet.core.balance;

import dev.parapet.core.time.RandomSource;
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

  /**
   * The balancer named in configuration ({@code origins.<name>.balancer}): {@code round_robin},
   * {@code least_request}, {@code ring_hash} or {@code ip_hash}. {@code random} is used by least
   * request only.
   */
  static LoadBalancer of(
      String algorithm, HostSet hosts, SlowStart slowStart, RandomSource random) {
    return switch (algorithm) {
      case "round_robin" -> new RoundRobinBalancer(hosts, slowStart);
      case "least_request" -> new LeastRequestBalancer(hosts, slowStart, random);
      case "ring_hash" -> new RingHashBalancer(hosts, slowStart);
      case "ip_hash" -> new IpHashBalancer(hosts, slowStart);
      default ->
          throw new IllegalArgumentException(
              "balancer : \""
                  + algorithm
                  + "\" (expected: one of round_robin, least_request, ring_hash, ip_hash)");
    };
  }
}
