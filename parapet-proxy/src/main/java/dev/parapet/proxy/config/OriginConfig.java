package dev.parapet.proxy.config;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One origin pool ({@code origins.NAME:}).
 *
 * @param name the key under {@code origins}
 * @param hosts at least one {@code host:port}
 * @param balancer how a host is picked; {@code least_request}
 * @param connectTimeout TCP connect timeout; 250 ms
 * @param timeout per-attempt timeout (an attempt gets the smaller of this and the remaining
 *     deadline); 3 s
 * @param slowStart how long a returning host ramps up its share; 30 s ({@code 0s}: none)
 * @param fallback another pool used while this one's breaker is open, or null
 */
public record OriginConfig(
    String name,
    List<HostPort> hosts,
    Balancer balancer,
    Duration connectTimeout,
    Duration timeout,
    Limits limits,
    RetryConfig retry,
    HedgeConfig hedge,
    BreakerConfig breaker,
    OutlierConfig outlier,
    HealthCheckConfig healthCheck,
    Duration slowStart,
    @Nullable String fallback) {

  public static final Balancer DEFAULT_BALANCER = Balancer.LEAST_REQUEST;
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofMillis(250);
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);
  public static final Duration DEFAULT_SLOW_START = Duration.ofSeconds(30);

  public OriginConfig {
    hosts = List.copyOf(hosts);
  }

  /** Load balancing across the pool's hosts. */
  public enum Balancer {
    /** Smooth weighted round robin. */
    ROUND_ROBIN,
    /** Power of two choices on in-flight requests. */
    LEAST_REQUEST,
    /** Consistent hashing on the request key. */
    RING_HASH,
    /** Hash of the client address. */
    IP_HASH
  }

  /**
   * {@code limits:} the pool's bounds; beyond them the proxy answers 503 {@code
   * connection_limit_reached}, never queues without bound.
   *
   * @param maxConnections open connections to the pool; 2048
   * @param maxPending requests waiting for a connection; 1024
   * @param maxRequests requests in flight to the pool; 4096
   */
  public record Limits(int maxConnections, int maxPending, int maxRequests) {
    public static final Limits DEFAULTS = new Limits(2048, 1024, 4096);
  }
}
