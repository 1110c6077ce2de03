package dev.parapet.proxy.server;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.admission.Partitions;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.BreakerRegistry;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.limit.LimitAlgorithm;
import dev.parapet.core.retry.RetryRefusal;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.config.AdmissionConfig;
import dev.parapet.proxy.flow.AccessLog;
import dev.parapet.proxy.flow.ClientLimits;
import dev.parapet.proxy.flow.IncidentMode;
import dev.parapet.proxy.flow.ProxyContext;
import dev.parapet.proxy.flow.ProxySettings;
import dev.parapet.proxy.flow.RequestIds;
import dev.parapet.proxy.flow.Tracing;
import dev.parapet.proxy.metrics.ProxyMetrics;
import dev.parapet.proxy.overload.OverloadMonitor;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.route.RouteTable;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * How one configuration (settings, routes, origin pools, cache) becomes the {@link ProxyContext}
 * requests run in: its metric series, the breakers (kept from the previous context when their
 * policy is unchanged, or when a reload keeps tripped ones), admission control and its route
 * shares. {@link ProxyServer} calls it at start, on reload and when incident mode changes.
 */
final class ContextAssembly {
  /** A context, and how many breakers it kept, made new, and kept although tripped. */
  record Built(ProxyContext context, int kept, int fresh, int keptTripped) {}

  private final ProxyMetrics metrics;
  private final Ticker ticker;
  private final RandomSource random;
  private final BreakerListener listeners;
  private final OverloadMonitor overload;
  private final IncidentMode incident;
  private final @Nullable AccessLog accessLog;
  private final RequestIds requestIds;
  private final Tracing tracing;

  /** The context in force, which the gauges read at scrape time. */
  private final Supplier<ProxyContext> current;

  ContextAssembly(
      ProxyMetrics metrics,
      Ticker ticker,
      RandomSource random,
      BreakerListener listeners,
      OverloadMonitor overload,
      IncidentMode incident,
      @Nullable AccessLog accessLog,
      RequestIds requestIds,
      Tracing tracing,
      Supplier<ProxyContext> current) {
    this.metrics = metrics;
    this.ticker = ticker;
    this.random = random;
    this.listeners = listeners;
    this.overload = overload;
    this.incident = incident;
    this.accessLog = accessLog;
    this.requestIds = requestIds;
    this.tracing = tracing;
    this.current = current;
  }

  Built build(
      ProxySettings settings,
      List<Route> routes,
      Map<String, OriginPool> pools,
      EdgeCache cache,
      @Nullable ProxyContext previous,
      boolean keepTripped) {
    for (Route r : routes) {
      if (!pools.containsKey(r.origin())) {
        throw new IllegalArgumentException(
            "routes."
                + r.id()
                + ".origin : "
                + r.origin()
                + " (expected: one of "
                + pools.keySet()
                + ")");
      }
    }
    Map<BreakerKey, BreakerPolicy> policies = breakerPolicies(routes, pools, incident);
    List<String> routeLabels = new ArrayList<>(routes.stream().map(Route::id).toList());
    routeLabels.add(ProxyMetrics.NO_ROUTE);
    metrics.ensureRoutes(routeLabels);
    metrics.ensureOrigins(List.copyOf(pools.keySet()));
    for (Route r : routes) {
      metrics.routeInfo(r.id(), r.origin());
    }
    for (OriginPool pool : pools.values()) {
      metrics.gauge("parapet.origin.inflight", "origin", pool.name(), pool::inFlight);
      metrics.gauge("parapet.ejected.hosts", "origin", pool.name(), pool::ejectedHosts);
      metrics.gauge("parapet.origin.hosts", "origin", pool.name(), () -> pool.hosts().size());
      metrics.gauge("parapet.ejected.share", "origin", pool.name(), pool::ejectedShare);
      metrics.gauge(
          "parapet.origin.degraded",
          "origin",
          pool.name(),
          () -> current.get().originDegraded(pool.name()) ? 1 : 0);
      metrics.gauge(
          "parapet.origin.max.requests", "origin", pool.name(), pool.settings()::maxRequests);
      pool.onConnectTimes(metrics.connectTimes(pool.name()));
      // At zero from the start, so dashboards and alerts see the series before the first retry.
      metrics.declare("parapet.retries", "origin", pool.name(), "result", "sent");
      for (RetryRefusal refusal : RetryRefusal.values()) {
        metrics.declare(
            "parapet.retries",
            "origin",
            pool.name(),
            "result",
            refusal.name().toLowerCase(Locale.ROOT));
      }
      for (HostPool h : pool.hosts()) {
        metrics.gauge("parapet.origin.connections", "host", h.id(), h::openConnections);
        metrics.gauge("parapet.origin.pending", "host", h.id(), h::pendingRequests);
      }
    }
    metrics.gauge(
        "parapet.cache.size.bytes", "cache", cache.name(), cache.store()::weightedSizeBytes);
    metrics.gauge("parapet.cache.entries", "cache", cache.name(), cache.store()::estimatedUris);
    for (EdgeCache.Status status : EdgeCache.Status.values()) {
      metrics.declareCache(status.label());
    }
    int[] kept = new int[2];
    BreakerRegistry registry =
        new BreakerRegistry(
            Math.max(1, policies.size()),
            Duration.ofDays(365),
            key -> {
              BreakerPolicy p = policies.get(key);
              BreakerPolicy policy = p == null ? BreakerPolicy.defaults() : p;
              CircuitBreaker before = previous == null ? null : previous.breakers().find(key);
              if (before != null && before.policy().equals(policy)) {
                kept[0]++;
                return before;
              }
              if (before != null && keepTripped && before.state() != State.CLOSED) {
                kept[1]++;
                return before;
              }
              CircuitBreaker b = new CircuitBreaker(key, policy, random, listeners, ticker.read());
              metrics.breakerCreated(b);
              return b;
            });
    // Create every configured breaker now, so metrics and the admin API show them from the start.
    for (BreakerKey key : policies.keySet()) {
      registry.get(key, ticker.read());
    }
    AdmissionController admission =
        previous != null && sameAdmission(previous.settings().admission(), settings.admission())
            ? previous.admission()
            : admission(settings.admission());
    admission.partitions(partitions(routes));
    metrics.gauge(
        "parapet.concurrency.limit",
        "listener",
        settings.name(),
        () -> current.get().admission().limit());
    metrics.gauge(
        "parapet.inflight",
        "listener",
        settings.name(),
        () -> current.get().admission().inflight());
    metrics.gauge(
        "parapet.queue.depth",
        "listener",
        settings.name(),
        () -> current.get().admission().queueDepth());
    ClientLimits clientLimits =
        previous != null
                && previous.clientLimits().max() == settings.admission().perClient().maxInflight()
            ? previous.clientLimits()
            : new ClientLimits(settings.admission().perClient().maxInflight());
    ProxyContext ctx =
        ProxyContext.builder(settings, metrics)
            .routes(new RouteTable(routes))
            .origins(pools)
            .breakers(registry)
            .clock(ticker, random)
            .admission(admission, clientLimits)
            .overload(overload, incident)
            .cache(cache)
            .accessLog(accessLog)
            .requestIds(requestIds)
            .tracing(tracing)
            .build();
    return new Built(ctx, kept[0], policies.size() - kept[0] - kept[1], kept[1]);
  }

  /** Each route's guaranteed share of the admission limit, in route order. */
  static Partitions partitions(List<Route> routes) {
    double[] shares = new double[routes.size()];
    for (int i = 0; i < shares.length; i++) {
      shares[i] = routes.get(i).share();
    }
    return Partitions.withDefaults(shares);
  }

  /** The limit and queue are kept across a reload unless their configuration changed. */
  private static boolean sameAdmission(AdmissionConfig a, AdmissionConfig b) {
    return a.limit().equals(b.limit()) && a.queue().equals(b.queue());
  }

  private AdmissionController admission(AdmissionConfig a) {
    LimitAlgorithm algorithm =
        LimitAlgorithm.named(
            a.limit().algorithm().name().toLowerCase(Locale.ROOT),
            a.limit().initial(),
            a.limit().min(),
            a.limit().max(),
            random);
    return new AdmissionController(
        algorithm,
        a.queue().max(),
        a.queue().targetSojourn().toNanos(),
        a.queue().interval().toNanos());
  }

  /** Every breaker key configuration can produce, with its policy. */
  static Map<BreakerKey, BreakerPolicy> breakerPolicies(
      List<Route> routes, Map<String, OriginPool> pools, IncidentMode incident) {
    Map<BreakerKey, BreakerPolicy> policies = new HashMap<>();
    for (Route r : routes) {
      OriginPool pool = pools.get(r.origin());
      if (pool == null) {
        continue;
      }
      BreakerPolicy routePolicy = r.breaker();
      BreakerPolicy policy =
          ProxyContext.breakerScope(r, pool) == Scope.ROUTE && routePolicy != null
              ? routePolicy
              : pool.settings().breaker();
      for (HostPool h : pool.hosts()) {
        // A ring-hash pool has one shard per host (its owner); others have shard 0 only.
        policies.put(
            ProxyContext.breakerKey(r, pool, h, h.index() % pool.shardCount()),
            incident.apply(policy));
      }
      String fallback = pool.settings().fallback();
      OriginPool fb = fallback == null ? null : pools.get(fallback);
      if (fb != null) {
        for (HostPool h : fb.hosts()) {
          policies.put(
              ProxyContext.breakerKey(r, fb, h, h.index() % fb.shardCount()),
              incident.apply(fb.settings().breaker()));
        }
      }
    }
    return policies;
  }
}
