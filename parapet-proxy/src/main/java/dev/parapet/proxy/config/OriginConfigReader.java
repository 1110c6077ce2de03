package dev.parapet.proxy.config;

import dev.parapet.core.balance.Host;
import dev.parapet.core.outcome.StatusSet;
import dev.parapet.core.retry.RetryOn;
import dev.parapet.proxy.config.MappingReader.ShareRange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the {@code origins:} block, one pool per name: its hosts, balancer, timeouts, connection
 * limits, retry, hedge, breaker ({@link BreakerConfigReader}), outlier ejection, health check, slow
 * start and fallback. A fallback is kept as written here; whether it names another origin, and
 * whether fallbacks lead back in a cycle, is checked once every origin is read ({@link
 * CrossBlockChecks}).
 */
final class OriginConfigReader {
  private static final Set<String> KEYS =
      MappingReader.keys(
          "hosts",
          "balancer",
          "hash_key",
          "connect_timeout",
          "timeout",
          "limits",
          "retry",
          "hedge",
          "breaker",
          "outlier",
          "health_check",
          "slow_start",
          "fallback",
          "tls");
  private static final Set<String> LIMITS =
      MappingReader.keys("max_connections", "max_pending", "max_requests");
  private static final Set<String> RETRY =
      MappingReader.keys("attempts", "on", "budget", "backoff", "capacity_hold");
  private static final Set<String> HOST_ENTRY = MappingReader.keys("address", "weight");
  private static final Set<String> HASH_KEY = MappingReader.keys("header", "cookie");
  private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9_-]{1,256}");
  private static final Set<String> RETRY_BUDGET = MappingReader.keys("ratio", "min_concurrency");
  private static final Set<String> BACKOFF = MappingReader.keys("base", "max");
  private static final Set<String> HEDGE = MappingReader.keys("delay", "min_delay", "budget");
  private static final Set<String> OUTLIER =
      MappingReader.keys(
          "consecutive_5xx",
          "failure_percentage",
          "min_requests",
          "interval",
          "base_ejection",
          "max_ejection",
          "max_ejected");
  private static final Set<String> HEALTH_CHECK =
      MappingReader.keys("path", "interval", "timeout", "healthy", "unhealthy");
  private static final Pattern ORIGIN_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,62}");
  private static final Pattern PERCENTILE = Pattern.compile("p(\\d{1,2}(?:\\.\\d{1,3})?)");

  private final List<ConfigProblem> problems;
  private final BreakerConfigReader breakers;
  private final TlsConfigReader tls;

  OriginConfigReader(
      List<ConfigProblem> problems, BreakerConfigReader breakers, TlsConfigReader tls) {
    this.problems = problems;
    this.breakers = breakers;
    this.tls = tls;
  }

  /**
   * The origin pools read, by name in file order, with what the checks across blocks need to report
   * at the right place: each pool's block and where its name is written. Filled as the block is
   * read.
   */
  record Origins(
      Map<String, OriginConfig> configs,
      Map<String, MappingReader> blocks,
      Map<String, YamlNode.Location> nameLocations) {}

  /** Reads the root's {@code origins:} mapping. */
  Origins read(MappingReader root) {
    Origins origins =
        new Origins(new LinkedHashMap<>(), new LinkedHashMap<>(), new LinkedHashMap<>());
    YamlNode node = root.node("origins");
    if (node == null) {
      problems.add(
          ConfigProblem.error("origins", "required: at least one origin pool", root.location()));
      return origins;
    }
    if (!(node instanceof YamlNode.Mapping m)) {
      root.error("origins", "must be a mapping of origin names to pools, was " + node.describe());
      return origins;
    }
    if (m.entries().isEmpty()) {
      root.error("origins", "must have at least one origin pool");
    }
    for (YamlNode.Entry e : m.entries().values()) {
      String name = e.key();
      String path = "origins." + name;
      if (!ORIGIN_NAME.matcher(name).matches()) {
        problems.add(
            ConfigProblem.error(
                path,
                "origin names must be letters, digits, '_' or '-' (they become metric labels),"
                    + " was '"
                    + name
                    + "'",
                e.keyLocation()));
      }
      MappingReader o = MappingReader.of(e.value(), path, e.keyLocation(), problems, KEYS);
      origins.blocks().put(name, o);
      origins.nameLocations().put(name, e.keyLocation());
      origins.configs().put(name, origin(name, o));
    }
    return origins;
  }

  private OriginConfig origin(String name, MappingReader o) {
    List<HostPort> hosts = new ArrayList<>();
    List<Integer> weights = new ArrayList<>();
    if (o.missing("hosts")) {
      problems.add(
          ConfigProblem.error(
              o.path("hosts"),
              "required: a list of host:port like [127.0.0.1:9001]",
              o.location()));
    } else if (o.has("hosts")) {
      List<YamlNode> items = o.list("hosts", "host:port");
      if (items.isEmpty() && !o.failed("hosts")) {
        o.error("hosts", "must have at least one host:port");
      }
      Set<HostPort> seen = new HashSet<>();
      for (int i = 0; i < items.size(); i++) {
        String path = o.path("hosts") + "[" + i + "]";
        YamlNode item = items.get(i);
        int weight = 1;
        YamlNode address = item;
        if (item instanceof YamlNode.Mapping) {
          MappingReader w = MappingReader.of(item, path, item.location(), problems, HOST_ENTRY);
          if (w.missing("address")) {
            problems.add(
                ConfigProblem.error(
                    w.path("address"), "required: host:port like 127.0.0.1:9001", w.location()));
            continue;
          }
          weight = w.integer("weight", 1, 1, Host.MAX_WEIGHT);
          address = w.node("address");
          path = w.path("address");
        }
        if (!(address instanceof YamlNode.Scalar s)) {
          problems.add(
              ConfigProblem.error(
                  path,
                  "must be host:port or {address: host:port, weight: N}, was "
                      + (address == null ? "nothing" : address.describe()),
                  item.location()));
          continue;
        }
        try {
          HostPort h = HostPort.parse(s.text());
          if (h.port() == 0) {
            problems.add(
                ConfigProblem.error(path, "must have a port in [1, 65535], was 0", s.location()));
          } else if (!seen.add(h)) {
            problems.add(ConfigProblem.error(path, "duplicate host " + h, s.location()));
          } else {
            hosts.add(h);
            weights.add(weight);
          }
        } catch (IllegalArgumentException ex) {
          problems.add(ConfigProblem.error(path, String.valueOf(ex.getMessage()), s.location()));
        }
      }
    }
    OriginConfig.Balancer balancer =
        o.choice("balancer", OriginConfig.DEFAULT_BALANCER, OriginConfig.Balancer.values());
    OriginConfig.HashKey hashKey = hashKey(o, balancer);
    Duration connectTimeout =
        o.positiveDuration("connect_timeout", OriginConfig.DEFAULT_CONNECT_TIMEOUT);
    Duration timeout = o.positiveDuration("timeout", OriginConfig.DEFAULT_TIMEOUT);
    if (!o.failed("connect_timeout", "timeout") && connectTimeout.compareTo(timeout) > 0) {
      o.warning(
          "connect_timeout",
          "is larger than the origin's timeout ("
              + HumanDuration.format(timeout)
              + "), so it never fires, was "
              + HumanDuration.format(connectTimeout));
    }
    MappingReader l = o.mapping("limits", LIMITS);
    OriginConfig.Limits dl = OriginConfig.Limits.DEFAULTS;
    OriginConfig.Limits limits =
        new OriginConfig.Limits(
            l.integer("max_connections", dl.maxConnections(), 1, MappingReader.MAX_COUNT),
            l.integer("max_pending", dl.maxPending(), 0, MappingReader.MAX_COUNT),
            l.integer("max_requests", dl.maxRequests(), 1, MappingReader.MAX_COUNT));
    RetryConfig retry = retry(o.mapping("retry", RETRY));
    HedgeConfig hedge =
        o.has("hedge") && !o.isOff("hedge") ? hedge(o.switchedOn("hedge", HEDGE)) : HedgeConfig.OFF;
    BreakerConfig breaker =
        breakers.read(o.mapping("breaker", BreakerConfigReader.KEYS), BreakerConfig.DEFAULTS);
    OutlierConfig outlier = outlier(o.mapping("outlier", OUTLIER));
    HealthCheckConfig healthCheck =
        o.has("health_check") && !o.isOff("health_check")
            ? healthCheck(o.switchedOn("health_check", HEALTH_CHECK))
            : HealthCheckConfig.OFF;
    Duration slowStart = o.duration("slow_start", OriginConfig.DEFAULT_SLOW_START);
    String fallback = o.has("fallback") ? o.string("fallback", "") : null;
    if (fallback != null && o.failed("fallback")) {
      fallback = null;
    }
    return new OriginConfig(
        name,
        hosts,
        weights,
        balancer,
        hashKey,
        connectTimeout,
        timeout,
        limits,
        retry,
        hedge,
        breaker,
        outlier,
        healthCheck,
        slowStart,
        fallback,
        tls.origin(o));
  }

  /**
   * {@code hash_key: path}, {@code {header: NAME}} or {@code {cookie: NAME}}; only a {@code
   * ring_hash} pool hashes, so with any other balancer the key is refused rather than ignored.
   */
  private OriginConfig.HashKey hashKey(MappingReader o, OriginConfig.Balancer balancer) {
    if (!o.has("hash_key")) {
      return OriginConfig.HashKey.PATH;
    }
    if (balancer != OriginConfig.Balancer.RING_HASH && !o.failed("balancer")) {
      o.error(
          "hash_key",
          "has no effect: only balancer: ring_hash hashes a request key, the balancer is "
              + balancer.name().toLowerCase(Locale.ROOT));
      return OriginConfig.HashKey.PATH;
    }
    YamlNode n = o.node("hash_key");
    if (n instanceof YamlNode.Scalar s && s.text().trim().equals("path")) {
      return OriginConfig.HashKey.PATH;
    }
    if (n instanceof YamlNode.Mapping) {
      MappingReader k = o.mapping("hash_key", HASH_KEY);
      boolean header = k.has("header");
      if (header == k.has("cookie")) {
        o.error("hash_key", "must name exactly one of header or cookie, like {header: X-User-Id}");
        return OriginConfig.HashKey.PATH;
      }
      String key = header ? "header" : "cookie";
      String name = k.string(key, "");
      if (k.failed(key)) {
        return OriginConfig.HashKey.PATH;
      }
      if (!TOKEN.matcher(name).matches()) {
        k.error(
            key, "must be a header or cookie name (letters, digits, - and _), was '" + name + "'");
        return OriginConfig.HashKey.PATH;
      }
      return new OriginConfig.HashKey(
          header ? OriginConfig.HashKey.Source.HEADER : OriginConfig.HashKey.Source.COOKIE, name);
    }
    o.error(
        "hash_key",
        "must be path, {header: NAME} or {cookie: NAME}, was "
            + (n == null ? "nothing" : n.describe()));
    return OriginConfig.HashKey.PATH;
  }

  private RetryConfig retry(MappingReader r) {
    RetryConfig d = RetryConfig.DEFAULTS;
    int attempts = r.integer("attempts", d.attempts(), 1, 10);
    RetryOn on = d.on();
    if (r.has("on")) {
      boolean connect = false;
      boolean timeout = false;
      List<String> statuses = new ArrayList<>();
      List<YamlNode> items = r.list("on", "retry conditions");
      for (int i = 0; i < items.size(); i++) {
        String path = r.path("on") + "[" + i + "]";
        YamlNode item = items.get(i);
        String expected = "connect_failure, timeout or a status like 503, 5xx or 500-504";
        if (!(item instanceof YamlNode.Scalar s)) {
          problems.add(
              ConfigProblem.error(
                  path, "must be " + expected + ", was " + item.describe(), item.location()));
          continue;
        }
        String t = s.text().trim().toLowerCase(Locale.ROOT);
        switch (t) {
          case "connect_failure" -> connect = true;
          case "timeout" -> timeout = true;
          default -> {
            try {
              StatusSet.parse(List.of(t));
              statuses.add(t);
            } catch (IllegalArgumentException e) {
              problems.add(
                  ConfigProblem.error(
                      path,
                      "must be "
                          + expected
                          + ", was "
                          + s.describe()
                          + Spelling.closest(t, List.of("connect_failure", "timeout"))
                              .map(n -> " (did you mean '" + n + "'?)")
                              .orElse(""),
                      s.location()));
            }
          }
        }
      }
      on = new RetryOn(connect, timeout, statuses);
    }
    MappingReader b = r.mapping("budget", RETRY_BUDGET);
    RetryConfig.Budget budget =
        new RetryConfig.Budget(
            b.percent("ratio", d.budget().ratio(), ShareRange.ANY),
            b.integer("min_concurrency", d.budget().minConcurrency(), 0, MappingReader.MAX_COUNT));
    MappingReader k = r.mapping("backoff", BACKOFF);
    Duration base = k.positiveDuration("base", d.backoff().base());
    Duration max = k.positiveDuration("max", d.backoff().max());
    k.checkOrder("base", base, "max", max, "backoff.base");
    Duration hold = r.duration("capacity_hold", d.capacityHold());
    return new RetryConfig(attempts, on, budget, new RetryConfig.Backoff(base, max), hold);
  }

  private HedgeConfig hedge(MappingReader r) {
    HedgeConfig d = HedgeConfig.DEFAULTS;
    HedgeConfig.Delay delay =
        r.parsed(
            "delay",
            d.delay(),
            "a percentile like p95 or a duration like 50ms",
            text -> {
              Matcher m = PERCENTILE.matcher(text.trim());
              if (m.matches()) {
                double q = Double.parseDouble(m.group(1)) / 100.0;
                if (q <= 0) {
                  throw new IllegalArgumentException(
                      "must be a percentile in (p0, p100), was '" + text + "'");
                }
                return new HedgeConfig.Delay.Percentile(q);
              }
              try {
                Duration fixed = HumanDuration.parse(text);
                if (fixed.isZero()) {
                  throw new IllegalArgumentException("must be > 0s, was 0s");
                }
                return new HedgeConfig.Delay.Fixed(fixed);
              } catch (IllegalArgumentException e) {
                if (String.valueOf(e.getMessage()).startsWith("must be > 0s")) {
                  throw e;
                }
                throw new IllegalArgumentException(
                    "must be a percentile like p95 or a duration like 50ms, was '" + text + "'", e);
              }
            });
    Duration minDelay = r.duration("min_delay", d.minDelay());
    double budget = r.percent("budget", d.budget(), ShareRange.ABOVE_ZERO);
    return new HedgeConfig(true, delay, minDelay, budget);
  }

  private OutlierConfig outlier(MappingReader r) {
    OutlierConfig d = OutlierConfig.DEFAULTS;
    int consecutive = r.integer("consecutive_5xx", d.consecutive5xx(), 0, 10_000);
    double failurePercentage =
        r.percent("failure_percentage", d.failurePercentage(), ShareRange.ABOVE_ZERO);
    int minRequests = r.integer("min_requests", d.minRequests(), 1, MappingReader.MAX_COUNT);
    Duration interval = r.positiveDuration("interval", d.interval());
    Duration baseEjection = r.positiveDuration("base_ejection", d.baseEjection());
    Duration maxEjection = r.positiveDuration("max_ejection", d.maxEjection());
    r.checkOrder(
        "base_ejection", baseEjection, "max_ejection", maxEjection, "outlier.base_ejection");
    double maxEjected = r.percent("max_ejected", d.maxEjected(), ShareRange.ANY);
    return new OutlierConfig(
        consecutive,
        failurePercentage,
        minRequests,
        interval,
        baseEjection,
        maxEjection,
        maxEjected);
  }

  private HealthCheckConfig healthCheck(MappingReader r) {
    HealthCheckConfig d = HealthCheckConfig.DEFAULTS;
    String path = r.string("path", d.path());
    if (!r.failed("path") && !path.startsWith("/")) {
      r.error("path", "must start with '/', was '" + path + "'");
    }
    Duration interval = r.positiveDuration("interval", d.interval());
    Duration timeout = r.positiveDuration("timeout", d.timeout());
    if (!r.failed("interval", "timeout") && timeout.compareTo(interval) > 0) {
      r.error(
          "timeout",
          "must be <= health_check.interval ("
              + HumanDuration.format(interval)
              + "), was "
              + HumanDuration.format(timeout));
    }
    return new HealthCheckConfig(
        true,
        path,
        interval,
        timeout,
        r.integer("healthy", d.healthy(), 1, 100),
        r.integer("unhealthy", d.unhealthy(), 1, 100));
  }
}
