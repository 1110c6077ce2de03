package dev.parapet.proxy.config;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One route ({@code routes[i]}).
 *
 * @param index position in {@code routes}
 * @param origin the origin pool's name (the loader checks it exists)
 * @param timeout the request budget; default {@code deadline.default}
 * @param priority class 1 (critical) … 4 (background); default {@code admission.priority.default}
 * @param breaker the effective breaker: the origin's, with this route's {@code breaker:} fields
 *     merged over it
 * @param cache caching on this route
 * @param retryNonIdempotent {@code retry_non_idempotent}
 * @param share {@code share}: the route's guaranteed share of the admission limit, or NaN for an
 *     equal split of what the routes with a share leave
 */
public record RouteConfig(
    int index,
    Match match,
    String origin,
    Duration timeout,
    int priority,
    BreakerConfig breaker,
    Cache cache,
    boolean retryNonIdempotent,
    double share) {

  /** A route with the default share. */
  public RouteConfig(
      int index,
      Match match,
      String origin,
      Duration timeout,
      int priority,
      BreakerConfig breaker,
      Cache cache,
      boolean retryNonIdempotent) {
    this(index, match, origin, timeout, priority, breaker, cache, retryNonIdempotent, Double.NaN);
  }

  /** A route that retries idempotent methods only. */
  public RouteConfig(
      int index,
      Match match,
      String origin,
      Duration timeout,
      int priority,
      BreakerConfig breaker,
      Cache cache) {
    this(index, match, origin, timeout, priority, breaker, cache, false);
  }

  /**
   * {@code match:} which requests the route takes.
   *
   * @param host the request's host (case-insensitive, without port), or null for any host
   * @param prefix the path prefix; {@code /}
   */
  public record Match(@Nullable String host, String prefix) {
    public static final Match ANY = new Match(null, "/");

    @Override
    public String toString() {
      return (host == null ? "*" : host) + prefix;
    }
  }

  /**
   * {@code cache:} {@code off}, or a block. Without {@code cache:} the route caches what the origin
   * marks cacheable (RFC 9111) and nothing else.
   *
   * @param enabled false for {@code cache: off}
   * @param defaultTtl {@code default_ttl}: freshness for a cacheable response that states none; 0 s
   * @param staleOnSlow {@code stale_on_slow}: with a stored copy that may be served stale-if-error,
   *     how long to wait for the origin before answering with that copy (the fetch goes on in the
   *     background and refreshes the entry); 0 s: never, wait for the origin; null for {@code
   *     auto}, the default: twice the origin's recent p95 of successful responses (at least 20 ms,
   *     at most the route's timeout), no wait while the origin is known slow
   */
  public record Cache(boolean enabled, Duration defaultTtl, @Nullable Duration staleOnSlow) {
    public static final Cache DEFAULTS = new Cache(true, Duration.ZERO, null);
    public static final Cache OFF = new Cache(false, Duration.ZERO, Duration.ZERO);

    /** Whether {@code stale_on_slow} is {@code auto}. */
    public boolean staleOnSlowAuto() {
      return staleOnSlow == null;
    }
  }
}
