package dev.parapet.proxy.route;

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
 */
public record Route(
    String id, @Nullable String host, String prefix, String origin, Duration timeout) {

  public Route {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(origin, "origin");
    Objects.requireNonNull(timeout, "timeout");
    if (!prefix.startsWith("/")) {
      throw new IllegalArgumentException("prefix : " + prefix + " (expected: starts with /)");
    }
    host = host == null ? null : host.toLowerCase(Locale.ROOT);
  }
}
