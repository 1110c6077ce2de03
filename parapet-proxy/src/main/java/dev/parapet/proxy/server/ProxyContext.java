package dev.parapet.proxy.server;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerRegistry;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.metrics.ProxyMetrics;
import dev.parapet.proxy.overload.OverloadMonitor;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.route.RouteTable;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginPool;
import io.netty.util.AsciiString;
import io.netty.util.HashedWheelTimer;
import java.util.HashMap;
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

  /** This proxy's {@code Via} member ({@code 1.1 NAME}), made once per configuration. */
  final AsciiString viaMember;

  /** Extra-load policies (retries, hedges) per origin pool, by name. */
  final Map<String, OriginTraffic> traffic;

  /** The listener's admission control: survives reloads that keep its configuration. */
  final AdmissionController admission;

  /** Requests in flight per client address (429 beyond the cap). */
  final ClientLimits clientLimits;

  /** Where a request's priority class comes from. */
  final Priorities priorities;

  /**
   * Hedge and retry delays and background-refresh timeouts, shared by every configuration of one
   * listener (attempt timeouts are one check per client connection, see ClientConnection).
   */
  final HashedWheelTimer timeouts;

  /** The overload level ({@code overload.current()}, one volatile read); listener-wide. */
  final OverloadMonitor overload;

  /** The monitor's level last handed to admission (changes are pushed on the next request). */
  private volatile OverloadLevel pushedLevel = OverloadLevel.NONE;

  /** Incident runbook state ({@code incident.preferStale()}); listener-wide. */
  final IncidentMode incident;

  ProxyContext(
      ProxySettings settings,
      RouteTable routes,
      Map<String, OriginPool> origins,
      BreakerRegistry breakers,
      Ticker ticker,
      RandomSource random,
      ProxyMetrics metrics,
      HashedWheelTimer timeouts,
      AdmissionController admission,
      ClientLimits clientLimits,
      OverloadMonitor overload,
      IncidentMode incident,
      EdgeCache cache) {
    this.settings = settings;
    this.routes = routes;
    this.origins = Map.copyOf(origins);
    this.breakers = breakers;
    this.responses = new LocalResponses(settings.name());
    this.viaMember = ForwardedHeaders.viaMember(settings.name());
    this.ticker = ticker;
    this.random = random;
    this.metrics = metrics;
    this.timeouts = timeouts;
    this.admission = admission;
    this.clientLimits = clientLimits;
    this.overload = overload;
    this.incident = incident;
    this.priorities = new Priorities(settings.admission().priority());
    Map<String, OriginTraffic> t = new HashMap<>();
    for (OriginPool pool : this.origins.values()) {
      t.put(pool.name(), OriginTraffic.of(pool.settings(), random, settings.minUseful()));
    }
    this.traffic = Map.copyOf(t);
    this.cache = cache;
  }

  /**
   * Hands a change of the overload monitor's level to admission control (which sheds queued
   * requests the new level refuses). Two volatile reads when nothing changed.
   */
  void syncOverload(long nowNanos) {
    OverloadLevel level = overload.current();
    if (level != pushedLevel) {
      pushedLevel = level;
      admission.overloadLevel(level, nowNanos);
    }
  }

  /**
   * The breaker key for an attempt, by the origin's configured scope; {@code shard} is {@link
   * OriginPool#shardOf} of the request's hash key (0 unless the pool uses ring hash). A route's
   * attempts on its origin's fallback pool have their own route breaker ({@code ROUTE->FALLBACK}),
   * never the one that is open.
   */
  static BreakerKey breakerKey(Route route, OriginPool origin, HostPool host, int shard) {
    Scope scope = origin.settings().breakerScope();
    return switch (scope) {
      case ORIGIN -> BreakerKey.of(Scope.ORIGIN, origin.name());
      case ROUTE ->
          BreakerKey.of(
              Scope.ROUTE,
              origin.name().equals(route.origin())
                  ? route.id()
                  : route.id() + "->" + origin.name());
      case HOST -> BreakerKey.of(Scope.HOST, host.id());
      case SHARD -> BreakerKey.of(Scope.SHARD, origin.name() + "/" + shard);
    };
  }

  CircuitBreaker breaker(Route route, OriginPool origin, HostPool host, int shard, long now) {
    return breakers.get(breakerKey(route, origin, host, shard), now);
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
