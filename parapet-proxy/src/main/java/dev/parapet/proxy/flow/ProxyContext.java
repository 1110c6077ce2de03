package dev.parapet.proxy.flow;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerRegistry;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.deadline.DeadlinePolicy;
import dev.parapet.core.exchange.AttemptPolicy;
import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.hedge.HedgeRateBudget;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.retry.RetryBudget;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.retry.UpstreamCapacity;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.CacheServices;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.config.HedgeConfig;
import dev.parapet.proxy.config.RetryConfig;
import dev.parapet.proxy.http.ForwardedHeaders;
import dev.parapet.proxy.http.LocalResponses;
import dev.parapet.proxy.metrics.ProxyMetrics;
import dev.parapet.proxy.overload.OverloadMonitor;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.route.RouteTable;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginPool;
import dev.parapet.proxy.upstream.OriginSettings;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * What every request of one listener shares under one configuration: routes, origin pools,
 * breakers, admission control, the edge cache, the clock. Immutable once built (the admission
 * controller, breakers and budgets inside are thread-safe); a reload builds a new one and requests
 * that already started finish with theirs.
 */
public final class ProxyContext {
  /** Hedges the rate cap lets through in a burst before the configured share applies. */
  private static final int HEDGE_BURST = 10;

  /** Samples an origin's latency needs before a percentile hedge delay is trusted. */
  private static final int HEDGE_MIN_SAMPLES = 20;

  /** The longest an origin's {@code Retry-After} may make its capacity signal hold. */
  private static final Duration CAPACITY_MAX_HOLD = Duration.ofSeconds(30);

  final ProxySettings settings;
  final RouteTable routes;
  final Map<String, OriginPool> origins;
  final BreakerRegistry breakers;
  final LocalResponses responses;
  final Ticker ticker;
  final RandomSource random;
  final ProxyMetrics metrics;
  final EdgeCache cache;
  final CacheServices cacheServices;
  final DeadlinePolicy deadlines;

  /** Request ids: the core's numbers and the {@code X-Request-Id} texts (across reloads). */
  final RequestIds requestIds;

  /** Spans of requests and attempts ({@link Tracing#OFF} unless configured). */
  final Tracing tracing;

  /** This proxy's {@code Via} member ({@code 1.1 NAME}), made once per configuration. */
  final AsciiString viaMember;

  /** The same for a request that arrived over HTTP/2 ({@code 2 NAME}). */
  final AsciiString viaMember2;

  /** How attempts at each origin pool are made (retries and hedges over one budget), by name. */
  private final Map<String, AttemptPolicy> attempts;

  /** Each route's position in the route list: its admission partition. */
  private final Map<String, Integer> routeIndex;

  /** Routes with their own classifier: their origin's attempt policy judged by it, by route id. */
  private final Map<String, AttemptPolicy> routeAttempts;

  final AdmissionController admission;
  final ClientLimits clientLimits;
  final Priorities priorities;
  final TrustedPeers trustedPeers;
  final OverloadMonitor overload;
  final IncidentMode incident;
  final @Nullable AccessLog accessLog;

  /** The monitor's level last handed to admission (changes are pushed on the next request). */
  private volatile OverloadLevel pushedLevel = OverloadLevel.NONE;

  /**
   * Breaker keys by scope and name, each made once: every attempt asks for its breaker, and a key
   * made for each was about 25 bytes of every request. Names come from configuration; a bound keeps
   * the map small should hosts come and go.
   */
  private final Map<Scope, ConcurrentHashMap<String, BreakerKey>> breakerKeys = keysByScope();

  private static final int MAX_CACHED_KEYS = 4096;

  private ProxyContext(Builder b) {
    this.settings = b.settings;
    this.routes = Objects.requireNonNull(b.routes, "routes");
    this.origins = Map.copyOf(b.origins);
    this.breakers = Objects.requireNonNull(b.breakers, "breakers");
    this.responses = new LocalResponses(settings.name());
    this.viaMember = ForwardedHeaders.viaMember(settings.name());
    this.viaMember2 = ForwardedHeaders.viaMember("2", settings.name());
    this.ticker = b.ticker;
    this.random = b.random;
    this.metrics = b.metrics;
    this.admission = Objects.requireNonNull(b.admission, "admission");
    this.clientLimits = Objects.requireNonNull(b.clientLimits, "clientLimits");
    this.overload = b.overload;
    this.incident = b.incident;
    this.accessLog = b.accessLog;
    this.requestIds = b.requestIds != null ? b.requestIds : new RequestIds(b.random);
    this.tracing = b.tracing;
    this.priorities = new Priorities(settings.admission().priority());
    this.trustedPeers = new TrustedPeers(settings.trustedProxies());
    this.deadlines = new DeadlinePolicy(settings.reserve(), settings.minUseful());
    Map<String, AttemptPolicy> a = new HashMap<>();
    for (OriginPool pool : origins.values()) {
      a.put(pool.name(), attemptPolicy(pool.settings(), random, settings.minUseful()));
    }
    this.attempts = Map.copyOf(a);
    Map<String, AttemptPolicy> own = new HashMap<>();
    for (Route r : routes.routes()) {
      AttemptPolicy p = a.get(r.origin());
      if (r.classifier() != null && p != null) {
        own.put(r.id(), p.withClassifier(r.classifier()));
      }
    }
    this.routeAttempts = Map.copyOf(own);
    Map<String, Integer> index = new HashMap<>();
    List<Route> all = routes.routes();
    for (int i = 0; i < all.size(); i++) {
      index.putIfAbsent(all.get(i).id(), i);
    }
    this.routeIndex = Map.copyOf(index);
    this.cache = b.cache;
    this.cacheServices =
        new CacheServices(cache, responses, metrics, ticker, incident::preferStale);
  }

  /** Starts a context for {@code settings}; every other part is required unless said otherwise. */
  public static Builder builder(ProxySettings settings, ProxyMetrics metrics) {
    return new Builder(settings, metrics);
  }

  /**
   * The origin's attempt policy: the core's retry and hedge policies over one shared extra-load
   * budget, so retries and hedges together stay within one ceiling.
   */
  static AttemptPolicy attemptPolicy(OriginSettings s, RandomSource random, Duration minUseful) {
    RetryConfig r = s.retry();
    ExtraLoadBudget extra =
        new ExtraLoadBudget(
            new RetryBudget(r.budget().ratio(), r.budget().minConcurrency()),
            ExtraLoadBudget.Sharing.SHARED);
    RetryPolicy retry =
        new RetryPolicy(
            r.attempts(), r.backoff().base(), r.backoff().max(), minUseful, random, extra);
    AttemptPolicy.Builder b =
        AttemptPolicy.builder(s.timeout(), retry)
            .classifier(s.classifier())
            .latency(s.latency())
            .retryOn(r.on());
    if (!r.capacityHold().isZero()) {
      Duration hold = r.capacityHold();
      Duration max = hold.compareTo(CAPACITY_MAX_HOLD) > 0 ? hold : CAPACITY_MAX_HOLD;
      b.capacity(new UpstreamCapacity(hold, max));
    }
    HedgeConfig h = s.hedge();
    if (h.enabled()) {
      double quantile = h.delay() instanceof HedgeConfig.Delay.Percentile p ? p.quantile() : 0.95;
      HedgePolicy hedge =
          new HedgePolicy(
              s.latency(),
              quantile,
              h.minDelay(),
              HEDGE_MIN_SAMPLES,
              Duration.ofMillis(100),
              new HedgeRateBudget(h.budget(), HEDGE_BURST),
              extra);
      if (h.delay() instanceof HedgeConfig.Delay.Fixed f) {
        b.hedge(hedge, f.delay());
      } else {
        b.hedge(hedge);
      }
    }
    if (s.fleetLimit() != null) {
      b.fleetLimit(s.fleetLimit());
    }
    return b.build();
  }

  /**
   * The attempt policy of {@code route}'s attempts on {@code pool}: the pool's, judged by the
   * route's own classifier when the route has one and {@code pool} is its own origin (a fallback
   * pool judges by its own rules).
   */
  AttemptPolicy attemptPolicy(Route route, OriginPool pool) {
    if (route.classifier() != null && pool.name().equals(route.origin())) {
      AttemptPolicy own = routeAttempts.get(route.id());
      if (own != null) {
        return own;
      }
    }
    return Objects.requireNonNull(attempts.get(pool.name()), pool.name());
  }

  /**
   * Whether {@code origin} said it is degraded ({@code Parapet-Capacity}) and the signal still
   * holds: its retries, hedges and background refreshes are held back meanwhile.
   */
  public boolean originDegraded(String origin) {
    AttemptPolicy p = attempts.get(origin);
    UpstreamCapacity cap = p == null ? null : p.capacity();
    return cap != null && cap.isDegraded(ticker.read());
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
  public static BreakerKey breakerKey(Route route, OriginPool origin, HostPool host, int shard) {
    Scope scope = breakerScope(route, origin);
    return BreakerKey.of(scope, breakerName(scope, route, origin, host, shard));
  }

  private static String breakerName(
      Scope scope, Route route, OriginPool origin, HostPool host, int shard) {
    return switch (scope) {
      case ORIGIN -> origin.name();
      case ROUTE ->
          origin.name().equals(route.origin()) ? route.id() : route.id() + "->" + origin.name();
      case HOST -> host.id();
      case SHARD -> origin.name() + "/" + shard;
    };
  }

  /** An empty map of keys for every scope, filled before the context is shared (read only). */
  private static Map<Scope, ConcurrentHashMap<String, BreakerKey>> keysByScope() {
    Map<Scope, ConcurrentHashMap<String, BreakerKey>> m = new EnumMap<>(Scope.class);
    for (Scope s : Scope.values()) {
      m.put(s, new ConcurrentHashMap<>());
    }
    return m;
  }

  /** The route's own scope on its own origin, the pool's scope otherwise. */
  public static Scope breakerScope(Route route, OriginPool origin) {
    Scope own = route.breakerScope();
    return own != null && origin.name().equals(route.origin())
        ? own
        : origin.settings().breakerScope();
  }

  CircuitBreaker breaker(Route route, OriginPool origin, HostPool host, int shard, long now) {
    Scope scope = breakerScope(route, origin);
    String name = breakerName(scope, route, origin, host, shard);
    ConcurrentHashMap<String, BreakerKey> byName = Objects.requireNonNull(breakerKeys.get(scope));
    BreakerKey key = byName.get(name);
    if (key == null) {
      key = BreakerKey.of(scope, name);
      if (byName.size() < MAX_CACHED_KEYS) {
        BreakerKey before = byName.putIfAbsent(name, key);
        key = before != null ? before : key;
      }
    }
    return breakers.get(key, now);
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

  /** The admission partition of {@code route} (its position), -1 for a route not configured. */
  int admissionPartition(Route route) {
    Integer i = routeIndex.get(route.id());
    return i == null ? -1 : i;
  }

  /** The routes of this configuration. */
  public RouteTable routes() {
    return routes;
  }

  public ProxySettings settings() {
    return settings;
  }

  public Map<String, OriginPool> origins() {
    return origins;
  }

  public BreakerRegistry breakers() {
    return breakers;
  }

  public AdmissionController admission() {
    return admission;
  }

  public ClientLimits clientLimits() {
    return clientLimits;
  }

  public EdgeCache cache() {
    return cache;
  }

  public ProxyMetrics metrics() {
    return metrics;
  }

  public LocalResponses responses() {
    return responses;
  }

  /** This proxy's {@code Via} member for HTTP/1.1. */
  public AsciiString viaMember() {
    return viaMember;
  }

  /**
   * This proxy's {@code Via} member for a request that arrived as {@code version}: {@code Via}
   * names the protocol this hop received (RFC 9110 §7.6.3), {@code 2} for HTTP/2.
   */
  public AsciiString viaMember(HttpVersion version) {
    return version.majorVersion() == 2 ? viaMember2 : viaMember;
  }

  /** Assembles a {@link ProxyContext}. */
  public static final class Builder {
    private final ProxySettings settings;
    private final ProxyMetrics metrics;
    private @Nullable RouteTable routes;
    private Map<String, OriginPool> origins = Map.of();
    private @Nullable BreakerRegistry breakers;
    private Ticker ticker = Ticker.system();
    private RandomSource random = RandomSource.seeded(1);
    private @Nullable AdmissionController admission;
    private @Nullable ClientLimits clientLimits;
    private OverloadMonitor overload = OverloadMonitor.disabled();
    private IncidentMode incident = new IncidentMode();
    private EdgeCache cache;
    private @Nullable AccessLog accessLog;
    private @Nullable RequestIds requestIds;
    private Tracing tracing = Tracing.OFF;

    private Builder(ProxySettings settings, ProxyMetrics metrics) {
      this.settings = Objects.requireNonNull(settings, "settings");
      this.metrics = Objects.requireNonNull(metrics, "metrics");
      this.cache = EdgeCache.disabled(settings.name());
    }

    public Builder routes(RouteTable routes) {
      this.routes = routes;
      return this;
    }

    public Builder origins(Map<String, OriginPool> origins) {
      this.origins = origins;
      return this;
    }

    public Builder breakers(BreakerRegistry breakers) {
      this.breakers = breakers;
      return this;
    }

    public Builder clock(Ticker ticker, RandomSource random) {
      this.ticker = ticker;
      this.random = random;
      return this;
    }

    public Builder admission(AdmissionController admission, ClientLimits clientLimits) {
      this.admission = admission;
      this.clientLimits = clientLimits;
      return this;
    }

    public Builder overload(OverloadMonitor overload, IncidentMode incident) {
      this.overload = overload;
      this.incident = incident;
      return this;
    }

    public Builder cache(EdgeCache cache) {
      this.cache = cache;
      return this;
    }

    /** One JSON line per request, or null for none. */
    public Builder accessLog(@Nullable AccessLog accessLog) {
      this.accessLog = accessLog;
      return this;
    }

    /** Tracing of requests and attempts; off when unset. */
    public Builder tracing(Tracing tracing) {
      this.tracing = tracing;
      return this;
    }

    /** The request ids shared by every configuration of one listener; a new set when unset. */
    public Builder requestIds(RequestIds ids) {
      this.requestIds = ids;
      return this;
    }

    public ProxyContext build() {
      return new ProxyContext(this);
    }
  }
}
