package dev.parapet.proxy.route;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.outcome.OutcomeClassifier;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One route: requests whose host matches {@code host} (any host when null) and whose path starts
 * with {@code prefix} go to the origin pool named {@code origin}, within {@code timeout}.
 *
 * @param id stable name for breaker keys and metric labels (from configuration, e.g. {@code
 *     shop.example.com/api/})
 * @param host the Host to match (case-insensitive, without port), or null for any
 * @param prefix the path prefix, starting with {@code /}
 * @param origin the origin pool's name
 * @param timeout the route's deadline for a request (DESIGN.md {@code routes[].timeout})
 * @param breaker the route's effective breaker policy (its {@code breaker:} fields over the
 *     origin's) for route-scoped breakers, or null to use the origin's
 * @param priority admission class of the route's requests, 1 (critical) .. 4 (background)
 * @param retryNonIdempotent whether requests with non-idempotent methods (POST, PATCH) and no body
 *     may be retried too ({@code routes[].retry_non_idempotent}); idempotent ones always may
 * @param breakerScope what the route's breaker protects on its own origin ({@code breaker.scope}
 *     merged over the origin's), or null for the origin's scope
 * @param classifier how the route's responses are judged ({@code breaker.failure_statuses} and
 *     {@code breaker.slow.threshold} merged over the origin's), or null for the origin's
 * @param probePath {@code breaker.probe.path} of a route-scoped breaker with synthetic probes, or
 *     null (live probes, or the origin's probe path for shared breakers)
 */
public record Route(
    String id,
    @Nullable String host,
    String prefix,
    String origin,
    Duration timeout,
    @Nullable BreakerPolicy breaker,
    int priority,
    boolean retryNonIdempotent,
    @Nullable Scope breakerScope,
    @Nullable OutcomeClassifier classifier,
    @Nullable String probePath) {

  /** Priority class of a route that states none (DESIGN.md {@code admission.priority.default}). */
  public static final int DEFAULT_PRIORITY = 2;

  public Route {
    if (priority < 1 || priority > 4) {
      throw new IllegalArgumentException("priority : " + priority + " (expected: in [1, 4])");
    }
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(origin, "origin");
    Objects.requireNonNull(timeout, "timeout");
    if (!prefix.startsWith("/")) {
      throw new IllegalArgumentException("prefix : " + prefix + " (expected: starts with /)");
    }
    host = host == null ? null : host.toLowerCase(Locale.ROOT);
  }

  /** A route that uses its origin's breaker scope, classification and probes. */
  public Route(
      String id,
      @Nullable String host,
      String prefix,
      String origin,
      Duration timeout,
      @Nullable BreakerPolicy breaker,
      int priority,
      boolean retryNonIdempotent) {
    this(
        id, host, prefix, origin, timeout, breaker, priority, retryNonIdempotent, null, null, null);
  }

  /** A route that uses its origin's breaker policy. */
  public Route(String id, @Nullable String host, String prefix, String origin, Duration timeout) {
    this(id, host, prefix, origin, timeout, null, DEFAULT_PRIORITY, false);
  }

  /** A route of the default priority class. */
  public Route(
      String id,
      @Nullable String host,
      String prefix,
      String origin,
      Duration timeout,
      @Nullable BreakerPolicy breaker) {
    this(id, host, prefix, origin, timeout, breaker, DEFAULT_PRIORITY, false);
  }

  /** A route that retries idempotent methods only. */
  public Route(
      String id,
      @Nullable String host,
      String prefix,
      String origin,
      Duration timeout,
      @Nullable BreakerPolicy breaker,
      int priority) {
    this(id, host, prefix, origin, timeout, breaker, priority, false);
  }
}
