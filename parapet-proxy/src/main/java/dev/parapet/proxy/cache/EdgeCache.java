package dev.parapet.proxy.cache;

import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The edge cache of one listener, as the request path sees it: the byte-bounded store, the
 * collapser of concurrent misses, the stale policy, which routes cache (and their {@code
 * default_ttl}), the wall clock, the counters behind {@code parapet_cache_total{status}} and the
 * gate of background refreshes. Built from configuration by the runtime; shared by every client
 * connection; thread-safe.
 *
 * <p>The request path uses these pieces through {@link CachingDownstream}, one per request; this
 * class holds no per-request state.
 *
 * <p><b>Background work is the lowest priority.</b> A stale-while-revalidate refresh runs only when
 * {@link #tryStartBackground()} agrees: at most {@code maxBackground} at a time, and only while the
 * {@linkplain #backgroundGate(BooleanSupplier) gate} says yes. Admission control (DESIGN "Admission
 * and back-pressure": background revalidation is shed first) installs its own gate, for example "no
 * queue and the limit has head-room"; a refused refresh is skipped, never queued — the stale
 * response was already served and the next request will try again.
 */
public final class EdgeCache {
  /** What a request (or a background event) did with the cache: the {@code status} label. */
  public enum Status {
    /** Fresh hit, served without the origin. */
    HIT,
    /** A stale response served: stale-while-revalidate, max-stale, or instead of an error. */
    STALE,
    /** Forwarded to the origin (miss, or validation that brought a full response). */
    MISS,
    /** Validated with the origin (304) and served from the updated entry. */
    REVALIDATED,
    /** Answered by another request's origin fetch. */
    COLLAPSED,
    /** Not looked up: method, a request body, no Host. */
    BYPASS,
    /** A response stored (event, besides the request's own status). */
    STORED,
    /** A background refresh started (event). */
    REFRESH,
    /** A background refresh skipped: already in flight, gate closed, breaker or pool refused. */
    REFRESH_SKIPPED,
    /** A stored response purged by the admin API (event, one per response). */
    PURGED,
    /** A stale copy answered because the origin was slower than the route's stale_on_slow. */
    STALE_ON_SLOW;

    /** The label value. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Default bound on background refreshes running at once. */
  public static final int DEFAULT_MAX_BACKGROUND = 64;

  /** Default bound on requests waiting for one key's fetch. */
  public static final int DEFAULT_MAX_WAITERS = 1024;

  private final String name;
  private final Settings settings;
  private final ResponseCache store;
  private final Collapser<CacheKey, CachedResponse> collapser;
  private final StalePolicy policy;
  private final Map<String, RouteRules> routes;
  private final LongSupplier wallMillis;
  private final Map<Status, LongAdder> counts;
  private final AtomicInteger background;
  private final int maxBackground;
  private volatile BooleanSupplier backgroundGate = () -> true;

  /**
   * The settings the cache is built from (what {@code cache:} says), so a reload can tell whether
   * the store can be kept.
   *
   * @param maxBytes {@code cache.max_size}
   * @param staleIfError {@code cache.stale_if_error}
   * @param staleWhileRevalidate {@code cache.stale_while_revalidate}
   * @param staleIfErrorOn {@code cache.stale_if_error_on}
   * @param heuristic {@code cache.heuristic} (its {@code default_ttl} is each route's)
   */
  public record Settings(
      long maxBytes,
      Duration staleIfError,
      Duration staleWhileRevalidate,
      Set<StaleTrigger> staleIfErrorOn,
      Heuristic heuristic) {
    public Settings {
      staleIfErrorOn = Set.copyOf(staleIfErrorOn);
    }

    /**
     * Operator stale windows for every trigger and no heuristic but the routes' {@code default_ttl}
     * (tests, embedding).
     */
    public Settings(long maxBytes, Duration staleIfError, Duration staleWhileRevalidate) {
      this(
          maxBytes,
          staleIfError,
          staleWhileRevalidate,
          EnumSet.allOf(StaleTrigger.class),
          Heuristic.NONE);
    }
  }

  /**
   * What one caching route adds.
   *
   * @param defaultTtl {@code default_ttl}: heuristic freshness for a response that states none; 0
   *     for none
   * @param staleOnSlow {@code stale_on_slow}: how long a request with a stored response it may be
   *     served stale-if-error waits for the origin before it is answered with that copy (the fetch
   *     goes on and refreshes the entry); 0 for never; null for {@code auto}: the origin's {@link
   *     dev.parapet.core.latency.AdaptiveWait}, capped at the route's timeout
   */
  public record RouteRules(Duration defaultTtl, @Nullable Duration staleOnSlow) {
    /** No {@code default_ttl} and no {@code stale_on_slow} (not even {@code auto}). */
    public static final RouteRules DEFAULTS = new RouteRules(Duration.ZERO, Duration.ZERO);
  }

  /**
   * @param name this proxy's name, the member name in {@code Cache-Status}
   * @param settings the store's size and the stale windows
   * @param routes route id to its {@code default_ttl} (zero for none), for every route that caches;
   *     a route absent here has {@code cache: off}
   * @param maintenance runs Caffeine's eviction work
   * @param wallMillis the wall clock (epoch millis), for {@code Date} and {@code Expires}
   */
  public EdgeCache(
      String name,
      Settings settings,
      Map<String, Duration> routes,
      Executor maintenance,
      LongSupplier wallMillis) {
    this(name, settings, maintenance, wallMillis, rulesOf(routes));
  }

  /**
   * @param name this proxy's name, the member name in {@code Cache-Status}
   * @param settings the store's size, the stale windows, the heuristic
   * @param maintenance runs Caffeine's eviction work
   * @param wallMillis the wall clock (epoch millis), for {@code Date} and {@code Expires}
   * @param routes route id to its rules, for every route that caches
   */
  public EdgeCache(
      String name,
      Settings settings,
      Executor maintenance,
      LongSupplier wallMillis,
      Map<String, RouteRules> routes) {
    this(
        name,
        settings,
        new ResponseCache(settings.maxBytes(), maintenance),
        new Collapser<>(DEFAULT_MAX_WAITERS),
        routes,
        wallMillis,
        newCounts(),
        new AtomicInteger(),
        DEFAULT_MAX_BACKGROUND);
  }

  private EdgeCache(
      String name,
      Settings settings,
      ResponseCache store,
      Collapser<CacheKey, CachedResponse> collapser,
      Map<String, RouteRules> routes,
      LongSupplier wallMillis,
      Map<Status, LongAdder> counts,
      AtomicInteger background,
      int maxBackground) {
    this.name = Objects.requireNonNull(name, "name");
    this.settings = settings;
    this.store = store;
    this.collapser = collapser;
    this.policy =
        new StalePolicy(
            settings.staleWhileRevalidate(), settings.staleIfError(), settings.staleIfErrorOn());
    this.routes = Map.copyOf(routes);
    this.wallMillis = wallMillis;
    this.counts = counts;
    this.background = background;
    this.maxBackground = maxBackground;
  }

  /** A cache no route uses (a listener built without cache configuration). */
  public static EdgeCache disabled(String name) {
    return new EdgeCache(
        name,
        new Settings(1, Duration.ZERO, Duration.ZERO),
        new ResponseCache(1, 1, Runnable::run),
        new Collapser<>(1),
        Map.of(),
        System::currentTimeMillis,
        newCounts(),
        new AtomicInteger(),
        0);
  }

  /**
   * The cache after a configuration reload: when the name and {@code cache:} settings are
   * unchanged, the stored responses, flights in progress and counters are kept and only the routes
   * change; otherwise a new, empty cache.
   */
  public EdgeCache reconfigured(
      String newName, Settings newSettings, Map<String, Duration> newRoutes, Executor executor) {
    return reconfiguredWith(newName, newSettings, rulesOf(newRoutes), executor);
  }

  /** As {@link #reconfigured}, with each route's rules. */
  public EdgeCache reconfiguredWith(
      String newName, Settings newSettings, Map<String, RouteRules> newRoutes, Executor executor) {
    if (!newName.equals(name) || !newSettings.equals(settings) || maxBackground == 0) {
      return new EdgeCache(newName, newSettings, executor, wallMillis, newRoutes);
    }
    EdgeCache next =
        new EdgeCache(
            name,
            settings,
            store,
            collapser,
            newRoutes,
            wallMillis,
            counts,
            background,
            maxBackground);
    next.backgroundGate = backgroundGate;
    return next;
  }

  private static Map<String, RouteRules> rulesOf(Map<String, Duration> defaultTtls) {
    Map<String, RouteRules> m = new HashMap<>();
    defaultTtls.forEach((id, ttl) -> m.put(id, new RouteRules(ttl, Duration.ZERO)));
    return m;
  }

  private static Map<Status, LongAdder> newCounts() {
    Map<Status, LongAdder> m = new EnumMap<>(Status.class);
    for (Status s : Status.values()) {
      m.put(s, new LongAdder());
    }
    return m;
  }

  /** True when the route with this id caches (no {@code cache: off}). */
  public boolean caches(String routeId) {
    return routes.containsKey(routeId);
  }

  /**
   * Keys whose last response could not be shared ("hit-for-miss", as Varnish calls it): requests
   * for them go to the origin at once instead of queueing behind another request's fetch, which
   * would only tell them to fetch for themselves. Without this, every concurrent request for a
   * popular uncacheable URL waited for the one before it. Forgotten after {@link #PASS_TTL} or when
   * a response for the key is stored.
   */
  private final com.github.benmanes.caffeine.cache.Cache<CacheKey, Boolean> pass =
      com.github.benmanes.caffeine.cache.Caffeine.newBuilder()
          .maximumSize(100_000)
          .expireAfterWrite(PASS_TTL)
          .executor(Runnable::run)
          .build();

  /** How long a key stays uncollapsed after an unshareable response. */
  public static final java.time.Duration PASS_TTL = java.time.Duration.ofSeconds(30);

  /** Remembers that {@code key}'s last response was not shareable. */
  public void markPass(CacheKey key) {
    if (pass.getIfPresent(key) == null) { // a read, not a write, on the common path
      pass.put(key, Boolean.TRUE);
    }
  }

  /** A response for {@code key} was stored: collapse its misses again. */
  public void clearPass(CacheKey key) {
    if (pass.getIfPresent(key) != null) {
      pass.invalidate(key);
    }
  }

  /** Whether misses for {@code key} should go to the origin uncollapsed. */
  public boolean isPass(CacheKey key) {
    return pass.getIfPresent(key) != null;
  }

  /** The route's {@code default_ttl} in nanoseconds; 0 for none. */
  public long defaultTtlNanos(String routeId) {
    RouteRules r = routes.get(routeId);
    return r == null ? 0 : r.defaultTtl().toNanos();
  }

  /** The heuristic freshness of responses on this route. */
  public Heuristic heuristic(String routeId) {
    return settings.heuristic().withDefaultTtl(defaultTtlNanos(routeId));
  }

  /** The route's {@code stale_on_slow}: zero for never, null for {@code auto}. */
  public @Nullable Duration staleOnSlow(String routeId) {
    RouteRules r = routes.get(routeId);
    return r == null ? Duration.ZERO : r.staleOnSlow();
  }

  public String name() {
    return name;
  }

  public ResponseCache store() {
    return store;
  }

  public Collapser<CacheKey, CachedResponse> collapser() {
    return collapser;
  }

  public StalePolicy policy() {
    return policy;
  }

  /** Wall-clock now in epoch millis. */
  public long wallMillis() {
    return wallMillis.getAsLong();
  }

  /** Counts one status. */
  public void count(Status s) {
    LongAdder a = counts.get(s);
    if (a != null) {
      a.increment();
    }
  }

  /** How often {@code s} was counted since the cache was created. */
  public long total(Status s) {
    LongAdder a = counts.get(s);
    return a == null ? 0 : a.sum();
  }

  /**
   * Installs the admission hook for background refreshes: asked before each one starts; false skips
   * it (shed first, DESIGN "Admission and back-pressure").
   */
  public void backgroundGate(BooleanSupplier mayStart) {
    this.backgroundGate = Objects.requireNonNull(mayStart, "mayStart");
  }

  /**
   * Reserves a background slot; false when {@code maxBackground} run already or the gate refuses.
   * Every true must be matched by one {@link #backgroundDone()}.
   */
  public boolean tryStartBackground() {
    if (!backgroundGate.getAsBoolean()) {
      return false;
    }
    while (true) {
      int n = background.get();
      if (n >= maxBackground) {
        return false;
      }
      if (background.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /** Frees a slot taken by {@link #tryStartBackground()}. */
  public void backgroundDone() {
    background.decrementAndGet();
  }

  /** Background refreshes running now. */
  public int backgroundInFlight() {
    return background.get();
  }
}
