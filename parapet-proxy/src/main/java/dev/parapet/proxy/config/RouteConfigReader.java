package dev.parapet.proxy.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads the {@code routes:} list in order: each route's match, origin, timeout, priority, breaker
 * overrides, cache and whether it retries non-idempotent requests. A route starts from what it
 * inherits: the timeout from {@code deadline.default}, the priority from {@code
 * admission.priority.default}, the breaker from its origin's. A route whose match repeats an
 * earlier one is never used, and is reported as such; its origin reference and its timeout against
 * the origin's are {@link CrossBlockChecks}.
 */
final class RouteConfigReader {
  private static final Set<String> KEYS =
      MappingReader.keys(
          "match",
          "origin",
          "timeout",
          "priority",
          "share",
          "breaker",
          "cache",
          "retry_non_idempotent");
  private static final Set<String> MATCH = MappingReader.keys("host", "prefix");
  private static final Set<String> CACHE = MappingReader.keys("default_ttl", "stale_on_slow");
  private static final Pattern HOST =
      Pattern.compile(
          "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*");

  private final List<ConfigProblem> problems;
  private final BreakerConfigReader breakers;
  private final CrossBlockChecks checks;

  RouteConfigReader(
      List<ConfigProblem> problems, BreakerConfigReader breakers, CrossBlockChecks checks) {
    this.problems = problems;
    this.breakers = breakers;
    this.checks = checks;
  }

  /** Reads the root's {@code routes:} list; a route without a known origin is left out. */
  List<RouteConfig> read(
      MappingReader root,
      Map<String, OriginConfig> origins,
      DeadlineConfig deadline,
      AdmissionConfig admission) {
    List<RouteConfig> routes = new ArrayList<>();
    YamlNode node = root.node("routes");
    if (node == null) {
      problems.add(ConfigProblem.error("routes", "required: at least one route", root.location()));
      return routes;
    }
    if (!(node instanceof YamlNode.Sequence seq)) {
      root.error("routes", "must be a list of routes, was " + node.describe());
      return routes;
    }
    if (seq.items().isEmpty()) {
      root.error("routes", "must have at least one route");
    }
    Map<RouteConfig.Match, Integer> firstByMatch = new HashMap<>();
    for (int i = 0; i < seq.items().size(); i++) {
      YamlNode item = seq.items().get(i);
      MappingReader r =
          MappingReader.of(item, "routes[" + i + "]", item.location(), problems, KEYS);
      RouteConfig route = route(i, r, origins, deadline, admission);
      if (route == null) {
        continue;
      }
      Integer first = firstByMatch.putIfAbsent(route.match(), i);
      if (first != null) {
        problems.add(
            ConfigProblem.warning(
                r.path("match"),
                "same match as routes["
                    + first
                    + "] ("
                    + route.match()
                    + "): this route is never used",
                r.location("match")));
      }
      routes.add(route);
    }
    double explicit = 0;
    for (RouteConfig route : routes) {
      explicit += Double.isNaN(route.share()) ? 0 : route.share();
    }
    if (explicit > 1.000_001) {
      for (RouteConfig route : routes) {
        if (!Double.isNaN(route.share())) {
          problems.add(
              ConfigProblem.error(
                  "routes[" + route.index() + "].share",
                  "routes' shares must add up to at most 100%, they add up to "
                      + Math.round(explicit * 1000) / 10.0
                      + "%",
                  root.location("routes")));
        }
      }
    }
    return routes;
  }

  private @Nullable RouteConfig route(
      int index,
      MappingReader r,
      Map<String, OriginConfig> origins,
      DeadlineConfig deadline,
      AdmissionConfig admission) {
    MappingReader m = r.mapping("match", MATCH);
    String host = null;
    if (m.has("host")) {
      String h = m.string("host", "");
      if (!m.failed("host")) {
        String lower = h.trim().toLowerCase(Locale.ROOT);
        if (HOST.matcher(lower).matches()) {
          host = lower;
        } else {
          m.error(
              "host", "must be a host name without port like shop.example.com, was '" + h + "'");
        }
      }
    }
    String prefix = m.string("prefix", RouteConfig.Match.ANY.prefix());
    if (!m.failed("prefix") && !prefix.startsWith("/")) {
      m.error("prefix", "must start with '/', was '" + prefix + "'");
    }
    OriginConfig origin = checks.routeOrigin(r, origins);
    Duration timeout = r.positiveDuration("timeout", deadline.defaultBudget());
    int priority = r.integer("priority", admission.priority().defaultPriority(), 1, 4);
    BreakerConfig inherited = origin == null ? BreakerConfig.DEFAULTS : origin.breaker();
    BreakerConfig breaker =
        r.has("breaker")
            ? breakers.readRoute(r.mapping("breaker", BreakerConfigReader.KEYS), inherited)
            : inherited;
    RouteConfig.Cache cache = RouteConfig.Cache.DEFAULTS;
    if (r.isOff("cache")) {
      cache = RouteConfig.Cache.OFF;
    } else if (r.has("cache")) {
      MappingReader c = r.switchedOn("cache", CACHE);
      cache =
          new RouteConfig.Cache(
              true,
              c.duration("default_ttl", RouteConfig.Cache.DEFAULTS.defaultTtl()),
              staleOnSlow(c));
    }
    if (origin != null) {
      checks.routeTimeout(r, timeout, origin);
    }
    boolean retryNonIdempotent =
        r.parsed(
            "retry_non_idempotent",
            false,
            "true or false",
            v ->
                switch (v.trim().toLowerCase(Locale.ROOT)) {
                  case "true" -> true;
                  case "false" -> false;
                  default ->
                      throw new IllegalArgumentException("must be true or false, was '" + v + "'");
                });
    double share =
        r.has("share")
            ? r.percent("share", Double.NaN, MappingReader.ShareRange.ABOVE_ZERO)
            : Double.NaN;
    if (origin == null) {
      return null;
    }
    return new RouteConfig(
        index,
        new RouteConfig.Match(host, prefix),
        origin.name(),
        timeout,
        priority,
        breaker,
        cache,
        retryNonIdempotent,
        share);
  }

  /** {@code stale_on_slow}: {@code auto} (null, the default) or a duration ({@code 0s}: off). */
  private static @Nullable Duration staleOnSlow(MappingReader c) {
    YamlNode.Scalar s = c.scalar("stale_on_slow", "auto or a duration like 250ms");
    if (s == null || s.text().equals("auto")) {
      return RouteConfig.Cache.DEFAULTS.staleOnSlow();
    }
    return c.duration("stale_on_slow", Duration.ZERO);
  }
}
