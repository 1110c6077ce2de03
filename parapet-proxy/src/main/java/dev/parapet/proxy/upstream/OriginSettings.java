package dev.parapet.proxy.upstream;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.outcome.OutcomeClassifier;
import dev.parapet.proxy.config.HedgeConfig;
import dev.parapet.proxy.config.RetryConfig;
import dev.parapet.proxy.tls.OriginTls;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One origin pool as the data plane needs it (built from DESIGN.md's {@code origins.NAME}).
 *
 * @param name the pool's name from configuration
 * @param hosts its hosts
 * @param connectTimeout TCP connect timeout per attempt
 * @param timeout per-attempt timeout (further bounded by the request's remaining deadline)
 * @param maxConnections open connections per host, at most
 * @param maxPending requests waiting for a connection per host, at most; beyond: 503
 * @param maxRequests requests in flight to the whole pool, at most; beyond: 503
 * @param breaker the breaker policy for this pool's scopes
 * @param breakerScope whether a breaker covers the pool, each route, or each host
 * @param classifier how attempts are classified (failure statuses, slow threshold)
 * @param latency the origin's rolling response-head latency: fed by every attempt, read by a
 *     relative slow-call threshold (and hedging)
 * @param retry retries of failed attempts ({@code origins.NAME.retry})
 * @param hedge hedged attempts ({@code origins.NAME.hedge}; off unless configured)
 * @param fallback the origin pool used while this one's breaker is open, or null
 * @param selection balancer, outlier ejection, health checks and slow start
 * @param probePath {@code breaker.probe.path}: the path synthetic half-open probes request, or null
 *     (live requests probe)
 * @param tls HTTPS to the hosts ({@code origins.NAME.tls}), or null for plain HTTP
 */
public record OriginSettings(
    String name,
    List<InetSocketAddress> hosts,
    Duration connectTimeout,
    Duration timeout,
    int maxConnections,
    int maxPending,
    int maxRequests,
    BreakerPolicy breaker,
    Scope breakerScope,
    OutcomeClassifier classifier,
    RollingLatencyHistogram latency,
    RetryConfig retry,
    HedgeConfig hedge,
    @Nullable String fallback,
    HostSelection selection,
    @Nullable String probePath,
    @Nullable OriginTls tls) {

  /** Retries of one attempt in all (no retry): what a pool built without configuration gets. */
  public static final RetryConfig NO_RETRY =
      new RetryConfig(
          1,
          RetryConfig.DEFAULTS.on(),
          RetryConfig.DEFAULTS.budget(),
          RetryConfig.DEFAULTS.backoff());

  /** A plain-HTTP pool. */
  public OriginSettings(
      String name,
      List<InetSocketAddress> hosts,
      Duration connectTimeout,
      Duration timeout,
      int maxConnections,
      int maxPending,
      int maxRequests,
      BreakerPolicy breaker,
      Scope breakerScope,
      OutcomeClassifier classifier,
      RollingLatencyHistogram latency,
      RetryConfig retry,
      HedgeConfig hedge,
      @Nullable String fallback,
      HostSelection selection,
      @Nullable String probePath) {
    this(
        name,
        hosts,
        connectTimeout,
        timeout,
        maxConnections,
        maxPending,
        maxRequests,
        breaker,
        breakerScope,
        classifier,
        latency,
        retry,
        hedge,
        fallback,
        selection,
        probePath,
        null);
  }

  /** A pool whose breakers probe with live requests. */
  public OriginSettings(
      String name,
      List<InetSocketAddress> hosts,
      Duration connectTimeout,
      Duration timeout,
      int maxConnections,
      int maxPending,
      int maxRequests,
      BreakerPolicy breaker,
      Scope breakerScope,
      OutcomeClassifier classifier,
      RollingLatencyHistogram latency,
      RetryConfig retry,
      HedgeConfig hedge,
      @Nullable String fallback,
      HostSelection selection) {
    this(
        name,
        hosts,
        connectTimeout,
        timeout,
        maxConnections,
        maxPending,
        maxRequests,
        breaker,
        breakerScope,
        classifier,
        latency,
        retry,
        hedge,
        fallback,
        selection,
        null);
  }

  /** A pool without retries, hedging or fallback, with {@link HostSelection#defaults()}. */
  public OriginSettings(
      String name,
      List<InetSocketAddress> hosts,
      Duration connectTimeout,
      Duration timeout,
      int maxConnections,
      int maxPending,
      int maxRequests,
      BreakerPolicy breaker,
      Scope breakerScope,
      OutcomeClassifier classifier,
      RollingLatencyHistogram latency) {
    this(
        name,
        hosts,
        connectTimeout,
        timeout,
        maxConnections,
        maxPending,
        maxRequests,
        breaker,
        breakerScope,
        classifier,
        latency,
        NO_RETRY,
        HedgeConfig.OFF,
        null,
        HostSelection.defaults());
  }

  public OriginSettings {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(retry, "retry");
    Objects.requireNonNull(hedge, "hedge");
    Objects.requireNonNull(selection, "selection");
    hosts = List.copyOf(hosts);
    if (hosts.isEmpty()) {
      throw new IllegalArgumentException(
          "origins." + name + ".hosts : [] (expected: at least one)");
    }
    if (maxConnections < 1 || maxPending < 0 || maxRequests < 1) {
      throw new IllegalArgumentException(
          "origins."
              + name
              + ".limits : "
              + maxConnections
              + "/"
              + maxPending
              + "/"
              + maxRequests
              + " (expected: max_connections >= 1, max_pending >= 0, max_requests >= 1)");
    }
  }

  /** The same pool with another host selection. */
  public OriginSettings withSelection(HostSelection s) {
    return new OriginSettings(
        name,
        hosts,
        connectTimeout,
        timeout,
        maxConnections,
        maxPending,
        maxRequests,
        breaker,
        breakerScope,
        classifier,
        latency,
        retry,
        hedge,
        fallback,
        s,
        probePath);
  }

  /** DESIGN.md's defaults for one origin with these hosts. */
  public static OriginSettings defaults(String name, List<InetSocketAddress> hosts) {
    return new OriginSettings(
        name,
        hosts,
        Duration.ofMillis(250),
        Duration.ofSeconds(3),
        2048,
        1024,
        4096,
        BreakerPolicy.defaults(),
        Scope.ROUTE,
        OutcomeClassifier.standard(),
        RollingLatencyHistogram.withDefaults(0),
        RetryConfig.DEFAULTS,
        HedgeConfig.OFF,
        null,
        HostSelection.defaults());
  }

  /** The same pool with other retry, hedge and fallback settings. */
  public OriginSettings withTraffic(RetryConfig r, HedgeConfig h, @Nullable String fb) {
    return new OriginSettings(
        name,
        hosts,
        connectTimeout,
        timeout,
        maxConnections,
        maxPending,
        maxRequests,
        breaker,
        breakerScope,
        classifier,
        latency,
        r,
        h,
        fb,
        selection,
        probePath);
  }

  /** The same pool whose breakers probe {@code path} (synthetic probes), or live when null. */
  public OriginSettings withProbePath(@Nullable String path) {
    return new OriginSettings(
        name,
        hosts,
        connectTimeout,
        timeout,
        maxConnections,
        maxPending,
        maxRequests,
        breaker,
        breakerScope,
        classifier,
        latency,
        retry,
        hedge,
        fallback,
        selection,
        path);
  }
}
