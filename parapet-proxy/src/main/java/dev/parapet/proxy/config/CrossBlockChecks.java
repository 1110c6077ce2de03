package dev.parapet.proxy.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The checks that need more than one block: whether the admin API is exposed without a token or on
 * the data listener's address, whether routes and fallbacks name known origins (and fallbacks do
 * not lead back in a cycle), whether an origin is used at all, and whether a route's timeout leaves
 * room after one attempt at its origin. Each runs as soon as the blocks it compares are read, and
 * reports at the YAML path of the field to change.
 */
final class CrossBlockChecks {
  private final List<ConfigProblem> problems;

  CrossBlockChecks(List<ConfigProblem> problems) {
    this.problems = problems;
  }

  /**
   * The admin API can force breakers open and reload configuration: off loopback it needs a token,
   * as it does when {@code read_token: required} asks reads for one; and it must not take the data
   * listener's address.
   */
  void admin(MappingReader r, AdminConfig admin, HostPort dataListen, boolean dataListenFailed) {
    HostPort listen = admin.listen();
    if (!r.failed("listen") && !listen.isLoopback() && !r.has("token_file")) {
      problems.add(
          ConfigProblem.error(
              r.path("token_file"),
              "required when admin.listen is off loopback (was "
                  + listen
                  + "): the admin API can force breakers open and reload configuration",
              r.location("listen")));
    } else if (!r.failed("read_token")
        && admin.readToken() == AdminConfig.ReadToken.REQUIRED
        && !r.has("token_file")) {
      problems.add(
          ConfigProblem.error(
              r.path("token_file"),
              "required when admin.read_token is required (was absent): reads must carry the"
                  + " bearer token this file holds",
              r.location("read_token")));
    }
    if (!r.failed("listen")
        && !dataListenFailed
        && listen.equals(dataListen)
        && listen.port() != 0) {
      r.error("listen", "must differ from listen (" + dataListen + "), was " + listen);
    }
  }

  /** An origin's fallback names another origin, and following fallbacks never leads back. */
  void fallbacks(OriginConfigReader.Origins origins) {
    Map<String, OriginConfig> configs = origins.configs();
    Set<String> reported = new HashSet<>();
    for (OriginConfig o : configs.values()) {
      String fallback = o.fallback();
      MappingReader r = origins.blocks().get(o.name());
      if (fallback == null || r == null) {
        continue;
      }
      if (fallback.equals(o.name())) {
        r.error("fallback", "must name another origin, was '" + fallback + "' (itself)");
      } else if (!configs.containsKey(fallback)) {
        r.error("fallback", unknownOrigin(fallback, configs.keySet()));
      } else if (!reported.contains(o.name())) {
        List<String> chain = new ArrayList<>(List.of(o.name()));
        String next = fallback;
        while (next != null && configs.containsKey(next) && !chain.contains(next)) {
          chain.add(next);
          next = configs.get(next).fallback();
        }
        if (o.name().equals(next)) {
          chain.add(next);
          reported.addAll(chain);
          r.error(
              "fallback",
              "must not lead back to this origin: fallback cycle " + String.join(" -> ", chain));
        }
      }
    }
  }

  /** The origin the route {@code r} names, or null when it names none or an unknown one. */
  @Nullable OriginConfig routeOrigin(MappingReader r, Map<String, OriginConfig> origins) {
    if (r.missing("origin")) {
      problems.add(
          ConfigProblem.error(
              r.path("origin"),
              "required: the origin pool this route sends to (known: "
                  + (origins.isEmpty() ? "none" : String.join(", ", origins.keySet()))
                  + ")",
              r.location()));
      return null;
    }
    if (!r.has("origin")) {
      return null;
    }
    String name = r.string("origin", "");
    if (r.failed("origin")) {
      return null;
    }
    OriginConfig origin = origins.get(name);
    if (origin == null) {
      r.error("origin", unknownOrigin(name, origins.keySet()));
    }
    return origin;
  }

  /**
   * Warns when the route {@code r}'s {@code timeout} is not larger than its origin's: one slow
   * attempt would use the whole budget.
   */
  void routeTimeout(MappingReader r, Duration timeout, OriginConfig origin) {
    if (!r.failed("timeout") && origin.timeout().compareTo(timeout) >= 0) {
      problems.add(
          ConfigProblem.warning(
              r.path("timeout"),
              "origin '"
                  + origin.name()
                  + "' timeout ("
                  + HumanDuration.format(origin.timeout())
                  + ") is not smaller than this route's timeout ("
                  + HumanDuration.format(timeout)
                  + "): one slow attempt uses the whole budget, leaving nothing to retry,"
                  + " fail over or answer before the caller gives up",
              r.location("timeout")));
    }
  }

  /** Warns about origins that no route sends to and no origin falls back to. */
  void unusedOrigins(OriginConfigReader.Origins origins, List<RouteConfig> routes) {
    Set<String> used = new HashSet<>();
    routes.forEach(r -> used.add(r.origin()));
    origins
        .configs()
        .values()
        .forEach(o -> {
          if (o.fallback() != null) {
            used.add(o.fallback());
          }
        });
    for (String name : origins.configs().keySet()) {
      MappingReader r = origins.blocks().get(name);
      if (!used.contains(name) && r != null) {
        problems.add(
            ConfigProblem.warning(
                r.path(), "not used by any route or fallback", origins.nameLocations().get(name)));
      }
    }
  }

  private static String unknownOrigin(String name, Set<String> known) {
    return "unknown origin '"
        + name
        + "' (known: "
        + (known.isEmpty() ? "none" : String.join(", ", known))
        + ")";
  }
}
