package dev.parapet.proxy.server;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerRegistry;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.metrics.ProxyMetrics;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.route.RouteTable;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginPool;
import io.netty.util.HashedWheelTimer;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** What every client connection of one listener shares: configuration-derived, thread-safe. */
final class ProxyContext {
  final ProxySettings settings;
  final RouteTable routes;
  final Map<String, OriginPool> origins;
  final BreakerRegistry breakers;
  final LocalResponses responses;
  final Ticker ticker;
  final RandomSource random;
  final ProxyMetrics metrics;

  /** The edge cache; routes with {@code cache: off} are not in it. */
  final EdgeCache cache;

  final AtomicLong requestIds = new AtomicLong();

  /** Attempt timeouts, shared by every configuration of one listener. */
  final HashedWheelTimer timeouts;

  ProxyContext(
      ProxySettings settings,
      RouteTable routes,
      Map<String, OriginPool> origins,
      BreakerRegistry breakers,
      Ticker ticker,
      RandomSource random,
      ProxyMetrics metrics,
      HashedWheelTimer timeouts,
      EdgeCache cache) {
    this.settings = settings;
    this.routes = routes;
    this.origins = Map.copyOf(origins);
    this.breakers = breakers;
    this.responses = new LocalResponses(settings.name());
    this.ticker = ticker;
    this.random = random;
    this.metrics = metrics;
    this.timeouts = timeouts;
    this.cache = cache;
  }

  /** The breaker key for an attempt, by the origin's configured scope. */
  static BreakerKey breakerKey(Route route, OriginPool origin, HostPool host) {
    Scope scope = origin.settings().breakerScope();
    return switch (scope) {
      case ORIGIN -> BreakerKey.of(Scope.ORIGIN, origin.name());
      case ROUTE -> BreakerKey.of(Scope.ROUTE, route.id());
      case HOST -> BreakerKey.of(Scope.HOST, host.id());
      // Shards need a ring-hash balancer to exist; until then a shard scope covers the pool.
      case SHARD -> BreakerKey.of(Scope.SHARD, origin.name() + "/0");
    };
  }

  CircuitBreaker breaker(Route route, OriginPool origin, HostPool host, long now) {
    return breakers.get(breakerKey(route, origin, host), now);
  }

  /**
   * Seconds for Retry-After: the breaker's remaining open time when it knows one, else a value
   * jittered within the configured range so clients do not come back in lockstep.
   */
  long retryAfterSeconds(long breakerNanos) {
    long min = settings.retryAfterMinSeconds();
    long max = settings.retryAfterMaxSeconds();
    if (breakerNanos > 0) {
      return Math.max(1, (breakerNanos + 999_999_999L) / 1_000_000_000L);
    }
    return min + random.nextLong(max - min + 1);
  }
}
