package dev.parapet.proxy.route;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Finds the route for a request: routes naming the request's host win over host-less ones, and
 * among those the longest matching path prefix wins. A request matching nothing gets no route (the
 * proxy answers 404): Parapet is never an open proxy.
 */
public final class RouteTable {
  private final List<Route> routes;

  /** The routes, in any order. */
  public RouteTable(List<Route> routes) {
    List<Route> sorted = new ArrayList<>(routes);
    sorted.sort(
        Comparator.comparing((Route r) -> r.host() == null)
            .thenComparing(r -> -r.prefix().length()));
    this.routes = List.copyOf(sorted);
  }

  /** The route for {@code hostHeader} (may carry a port; may be null) and {@code path}, or null. */
  public @Nullable Route match(@Nullable String hostHeader, String path) {
    String host = null;
    boolean hostKnown = false; // worked out only when a route names a host
    for (Route r : routes) {
      if (r.host() != null) {
        if (!hostKnown) {
          host = hostOnly(hostHeader);
          hostKnown = true;
        }
        if (!r.host().equals(host)) {
          continue;
        }
      }
      if (path.startsWith(r.prefix())) {
        return r;
      }
    }
    return null;
  }

  /** All routes, most specific first. */
  public List<Route> routes() {
    return routes;
  }

  /** Lower-cased host without port; handles {@code [v6]:port}. */
  static @Nullable String hostOnly(@Nullable String hostHeader) {
    if (hostHeader == null || hostHeader.isEmpty()) {
      return null;
    }
    String h = hostHeader.trim().toLowerCase(Locale.ROOT);
    if (h.startsWith("[")) {
      int end = h.indexOf(']');
      return end < 0 ? h : h.substring(0, end + 1);
    }
    int colon = h.indexOf(':');
    return colon < 0 ? h : h.substring(0, colon);
  }
}
