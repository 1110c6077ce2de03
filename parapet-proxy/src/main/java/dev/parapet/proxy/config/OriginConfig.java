package dev.parapet.proxy.config;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One origin pool ({@code origins.NAME:}).
 *
 * @param name the key under {@code origins}
 * @param hosts at least one {@code host:port}
 * @param weights each host's weight, in the order of {@code hosts}; 1 unless written as {@code
 *     {address: host:port, weight: N}}
 * @param balancer how a host is picked; {@code least_request}
 * @param hashKey what {@code ring_hash} hashes; the path
 * @param connectTimeout TCP connect timeout; 250 ms
 * @param timeout per-attempt timeout (an attempt gets the smaller of this and the remaining
 *     deadline); 3 s
 * @param slowStart how long a returning host ramps up its share; 30 s ({@code 0s}: none)
 * @param tls HTTPS to the pool's hosts, or null for plain HTTP
 * @param fallback another pool used while this one's breaker is open, or null
 */
public record OriginConfig(
    String name,
    List<HostPort> hosts,
    List<Integer> weights,
    Balancer balancer,
    HashKey hashKey,
    Duration connectTimeout,
    Duration timeout,
    Limits limits,
    RetryConfig retry,
    HedgeConfig hedge,
    BreakerConfig breaker,
    OutlierConfig outlier,
    HealthCheckConfig healthCheck,
    Duration slowStart,
    @Nullable String fallback,
    @Nullable OriginTlsConfig tls) {

  public static final Balancer DEFAULT_BALANCER = Balancer.LEAST_REQUEST;
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofMillis(250);
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);
  public static final Duration DEFAULT_SLOW_START = Duration.ofSeconds(30);

  public OriginConfig {
    hosts = List.copyOf(hosts);
    weights = List.copyOf(weights);
  }

  /**
   * {@code hash_key:} what a {@code ring_hash} pool hashes to keep a request on one host: the path
   * (the default), a request header ({@code {header: X-User-Id}}) or a cookie ({@code {cookie:
   * session}}); a request without that header or cookie hashes its path.
   *
   * @param source path, header or cookie
   * @param name the header or cookie name; null for the path
   */
  public record HashKey(Source source, @Nullable String name) {
    public static final HashKey PATH = new HashKey(Source.PATH, null);

    /** What is hashed. */
    public enum Source {
      PATH,
      HEADER,
      COOKIE
    }
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
