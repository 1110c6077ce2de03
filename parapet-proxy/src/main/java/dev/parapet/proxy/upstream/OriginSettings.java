package dev.parapet.proxy.upstream;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.fleet.FleetLimiter;
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
 * @param fleetLimit the fleet-wide ceiling every attempt at this pool takes a token from, or null
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
    @Nullable OriginTls tls,
    @Nullable FleetLimiter fleetLimit) {

  /** Retries of one attempt in all (no retry): what a pool built without configuration gets. */
  public static final RetryConfig NO_RETRY =
      new RetryConfig(
          1,
          RetryConfig.DEFAULTS.on(),
          RetryConfig.DEFAULTS.budget(),
          RetryConfig.DEFAULTS.backoff());

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
    return toBuilder().selection(s).build();
  }

  /** DESIGN.md's defaults for one origin with these hosts. */
  public static OriginSettings defaults(String name, List<InetSocketAddress> hosts) {
    return builder(name, hosts).build();
  }

  /** The same pool with other retry, hedge and fallback settings. */
  public OriginSettings withTraffic(RetryConfig r, HedgeConfig h, @Nullable String fb) {
    return toBuilder().retry(r).hedge(h).fallback(fb).build();
  }

  /** The same pool whose breakers probe {@code path} (synthetic probes), or live when null. */
  public OriginSettings withProbePath(@Nullable String path) {
    return toBuilder().probePath(path).build();
  }

  /** The same pool whose attempts take tokens from {@code limiter} (none when null). */
  public OriginSettings withFleetLimit(@Nullable FleetLimiter limiter) {
    return toBuilder().fleetLimit(limiter).build();
  }

  /**
   * A pool named {@code name} with these hosts and DESIGN.md's defaults for everything else: 250 ms
   * connect timeout, 3 s timeout, limits 2048/1024/4096, the default breaker per route, the
   * standard classifier, default retries, no hedging, no fallback, default host selection, live
   * probes, plain HTTP, no fleet-wide ceiling.
   */
  public static Builder builder(String name, List<InetSocketAddress> hosts) {
    return new Builder(name, hosts);
  }

  /** A builder holding this pool's settings. */
  public Builder toBuilder() {
    Builder b = new Builder(name, hosts);
    b.connectTimeout = connectTimeout;
    b.timeout = timeout;
    b.maxConnections = maxConnections;
    b.maxPending = maxPending;
    b.maxRequests = maxRequests;
    b.breaker = breaker;
    b.breakerScope = breakerScope;
    b.classifier = classifier;
    b.latency = latency;
    b.retry = retry;
    b.hedge = hedge;
    b.fallback = fallback;
    b.selection = selection;
    b.probePath = probePath;
    b.tls = tls;
    b.fleetLimit = fleetLimit;
    return b;
  }

  /** Builds {@link OriginSettings}; every setting starts at DESIGN.md's default. */
  public static final class Builder {
    private final String name;
    private final List<InetSocketAddress> hosts;
    private Duration connectTimeout = Duration.ofMillis(250);
    private Duration timeout = Duration.ofSeconds(3);
    private int maxConnections = 2048;
    private int maxPending = 1024;
    private int maxRequests = 4096;
    private BreakerPolicy breaker = BreakerPolicy.defaults();
    private Scope breakerScope = Scope.ROUTE;
    private OutcomeClassifier classifier = OutcomeClassifier.standard();
    private @Nullable RollingLatencyHistogram latency;
    private RetryConfig retry = RetryConfig.DEFAULTS;
    private HedgeConfig hedge = HedgeConfig.OFF;
    private @Nullable String fallback;
    private HostSelection selection = HostSelection.defaults();
    private @Nullable String probePath;
    private @Nullable OriginTls tls;
    private @Nullable FleetLimiter fleetLimit;

    private Builder(String name, List<InetSocketAddress> hosts) {
      this.name = Objects.requireNonNull(name, "name");
      this.hosts = Objects.requireNonNull(hosts, "hosts");
    }

    public Builder connectTimeout(Duration d) {
      this.connectTimeout = Objects.requireNonNull(d, "connectTimeout");
      return this;
    }

    public Builder timeout(Duration d) {
      this.timeout = Objects.requireNonNull(d, "timeout");
      return this;
    }

    /** Open connections per host, requests waiting per host, requests in flight to the pool. */
    public Builder limits(int maxConnections, int maxPending, int maxRequests) {
      this.maxConnections = maxConnections;
      this.maxPending = maxPending;
      this.maxRequests = maxRequests;
      return this;
    }

    public Builder breaker(BreakerPolicy policy, Scope scope) {
      this.breaker = Objects.requireNonNull(policy, "breaker");
      this.breakerScope = Objects.requireNonNull(scope, "breakerScope");
      return this;
    }

    public Builder classifier(OutcomeClassifier c) {
      this.classifier = Objects.requireNonNull(c, "classifier");
      return this;
    }

    /** The origin's rolling latency; a fresh default histogram when not set. */
    public Builder latency(RollingLatencyHistogram h) {
      this.latency = Objects.requireNonNull(h, "latency");
      return this;
    }

    public Builder retry(RetryConfig r) {
      this.retry = Objects.requireNonNull(r, "retry");
      return this;
    }

    public Builder hedge(HedgeConfig h) {
      this.hedge = Objects.requireNonNull(h, "hedge");
      return this;
    }

    public Builder fallback(@Nullable String pool) {
      this.fallback = pool;
      return this;
    }

    public Builder selection(HostSelection s) {
      this.selection = Objects.requireNonNull(s, "selection");
      return this;
    }

    public Builder probePath(@Nullable String path) {
      this.probePath = path;
      return this;
    }

    public Builder tls(@Nullable OriginTls t) {
      this.tls = t;
      return this;
    }

    public Builder fleetLimit(@Nullable FleetLimiter limiter) {
      this.fleetLimit = limiter;
      return this;
    }

    public OriginSettings build() {
      RollingLatencyHistogram h = latency;
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
          h != null ? h : RollingLatencyHistogram.withDefaults(0),
          retry,
          hedge,
          fallback,
          selection,
          probePath,
          tls,
          fleetLimit);
    }
  }
}
