package dev.parapet.proxy.config;

import dev.parapet.core.outcome.StatusSet;
import dev.parapet.core.retry.RetryOn;
import dev.parapet.proxy.config.MappingReader.ShareRange;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Walks a {@link YamlNode} tree into a {@link ProxyConfig}, block by block, tracking the YAML path.
 * Every field is read with a {@link MappingReader} from a base value (DESIGN.md's default), so one
 * bad value never hides the next: all problems are collected. After the fields come the checks
 * across blocks — references between routes, origins and fallbacks, the admin token, timeouts that
 * leave no room.
 *
 * <p>Messages follow DESIGN.md: {@code path: must be <expected>, was <found>}.
 */
final class ProxyConfigReader {
  private static final Set<String> ROOT =
      keys(
          "name",
          "listen",
          "admin",
          "deadline",
          "admission",
          "overload",
          "cache",
          "origins",
          "routes",
          "access_log");
  private static final Set<String> ACCESS_LOG = keys("path");
  private static final Set<String> ADMIN = keys("listen", "token_file");
  private static final Set<String> DEADLINE = keys("default", "reserve", "min_useful");
  private static final Set<String> ADMISSION =
      keys("limit", "queue", "priority", "retry_after", "per_client");
  private static final Set<String> PER_CLIENT = keys("max_inflight");
  private static final Set<String> LIMIT = keys("algorithm", "initial", "min", "max");
  private static final Set<String> QUEUE = keys("max", "target_sojourn", "interval");
  private static final Set<String> PRIORITY = keys("header", "trusted_sources", "default");
  private static final Set<String> MIN_MAX = keys("min", "max");
  private static final Set<String> OVERLOAD = keys("heap", "cpu", "event_loop_lag");
  private static final Set<String> HEAP = keys("shed_low", "stop_accepting");
  private static final Set<String> CPU = keys("shed_low");
  private static final Set<String> EVENT_LOOP_LAG = keys("shed_low", "stop_accepting");
  private static final Set<String> CACHE =
      keys("max_size", "stale_if_error", "stale_while_revalidate");
  private static final Set<String> ORIGIN =
      keys(
          "hosts",
          "balancer",
          "connect_timeout",
          "timeout",
          "limits",
          "retry",
          "hedge",
          "breaker",
          "outlier",
          "health_check",
          "slow_start",
          "fallback");
  private static final Set<String> LIMITS = keys("max_connections", "max_pending", "max_requests");
  private static final Set<String> RETRY = keys("attempts", "on", "budget", "backoff");
  private static final Set<String> RETRY_BUDGET = keys("ratio", "min_concurrency");
  private static final Set<String> BACKOFF = keys("base", "max");
  private static final Set<String> HEDGE = keys("delay", "min_delay", "budget");
  private static final Set<String> OUTLIER =
      keys(
          "consecutive_5xx",
          "failure_percentage",
          "min_requests",
          "interval",
          "base_ejection",
          "max_ejection",
          "max_ejected");
  private static final Set<String> HEALTH_CHECK =
      keys("path", "interval", "timeout", "healthy", "unhealthy");
  private static final Set<String> ROUTE =
      keys("match", "origin", "timeout", "priority", "breaker", "cache", "retry_non_idempotent");
  private static final Set<String> MATCH = keys("host", "prefix");
  private static final Set<String> ROUTE_CACHE = keys("default_ttl");

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
  private static final Pattern ORIGIN_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,62}");
  private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
  private static final Pattern HOST =
      Pattern.compile(
          "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*");
  private static final Pattern PERCENTILE = Pattern.compile("p(\\d{1,2}(?:\\.\\d{1,3})?)");
  private static final int MAX_COUNT = 1_000_000;

  private final List<ConfigProblem> problems;
  private final Path baseDir;
  private final Map<String, YamlNode.Location> originKeys = new HashMap<>();
  private final BreakerConfigReader breakers;

  ProxyConfigReader(List<ConfigProblem> problems, Path baseDir) {
    this.problems = problems;
    this.baseDir = baseDir;
    this.breakers = new BreakerConfigReader(problems);
  }

  private static Set<String> keys(String... names) {
    return new LinkedHashSet<>(List.of(names));
  }

  ProxyConfig read(YamlNode.@Nullable Mapping root) {
    YamlNode.Location top = root == null ? new YamlNode.Location(1, 1) : root.location();
    MappingReader r = MappingReader.of(root, "", top, problems, ROOT);
    String name = r.string("name", ProxyConfig.DEFAULT_NAME);
    if (r.has("name") && !r.failed("name") && !NAME.matcher(name).matches()) {
      r.error(
          "name",
          "must be letters, digits, '.', '_' or '-' (it appears in Via and Proxy-Status), was '"
              + name
              + "'");
    }
    HostPort listen = r.hostPort("listen", ProxyConfig.DEFAULT_LISTEN);
    AdminConfig admin = admin(r.mapping("admin", ADMIN), listen, r.failed("listen"));
    DeadlineConfig deadline = deadline(r.mapping("deadline", DEADLINE));
    AdmissionConfig admission = admission(r.mapping("admission", ADMISSION));
    OverloadConfig overload = overload(r.mapping("overload", OVERLOAD));
    CacheConfig cache = cache(r.mapping("cache", CACHE));
    Map<String, MappingReader> originReaders = new LinkedHashMap<>();
    Map<String, OriginConfig> origins = origins(r, originReaders);
    checkFallbacks(origins, originReaders);
    List<RouteConfig> routes = routes(r, origins, deadline, admission);
    warnUnusedOrigins(origins, originReaders, routes);
    Path accessLog = accessLog(r.mapping("access_log", ACCESS_LOG));
    return new ProxyConfig(
        name, listen, admin, deadline, admission, overload, cache, origins, routes, accessLog);
  }

  // ---- top-level blocks ----

  /** {@code access_log: {path: FILE}}: relative to the configuration file; absent means off. */
  private @Nullable Path accessLog(MappingReader r) {
    if (!r.has("path")) {
      return null;
    }
    String p = r.string("path", "");
    if (r.failed("path")) {
      return null;
    }
    try {
      Path file = baseDir.resolve(p).normalize();
      Path parent = file.toAbsolutePath().getParent();
      if (p.isBlank()
          || Files.isDirectory(file)
          || (parent != null && !Files.isDirectory(parent))) {
        r.error("path", "must be a file in an existing directory, was '" + p + "'");
        return null;
      }
      return file;
    } catch (InvalidPathException e) {
      r.error("path", "must be a file path, was '" + p + "'");
      return null;
    }
  }

  private AdminConfig admin(MappingReader r, HostPort dataListen, boolean dataListenFailed) {
    AdminConfig d = AdminConfig.DEFAULTS;
    HostPort listen = r.hostPort("listen", d.listen());
    Path tokenFile = null;
    if (r.has("token_file")) {
      String t = r.string("token_file", "");
      if (!r.failed("token_file")) {
        try {
          tokenFile = baseDir.resolve(t).normalize();
          if (!Files.isReadable(tokenFile)) {
            r.error(
                "token_file",
                "must be a readable file, was '" + t + "' (" + tokenFile + " not found)");
          }
        } catch (InvalidPathException e) {
          r.error("token_file", "must be a file path, was '" + t + "'");
        }
      }
    }
    if (!r.failed("listen") && !listen.isLoopback() && !r.has("token_file")) {
      problems.add(
          ConfigProblem.error(
              r.path("token_file"),
              "required when admin.listen is off loopback (was "
                  + listen
                  + "): the admin API can force breakers open and reload configuration",
              r.location("listen")));
    }
    if (!r.failed("listen")
        && !dataListenFailed
        && listen.equals(dataListen)
        && listen.port() != 0) {
      r.error("listen", "must differ from listen (" + dataListen + "), was " + listen);
    }
    return new AdminConfig(listen, tokenFile);
  }

  private DeadlineConfig deadline(MappingReader r) {
    DeadlineConfig d = DeadlineConfig.DEFAULTS;
    Duration budget = r.positiveDuration("default", d.defaultBudget());
    Duration reserve = r.duration("reserve", d.reserve());
    Duration minUseful = r.duration("min_useful", d.minUseful());
    if (!r.failed("default", "reserve") && reserve.compareTo(budget) >= 0) {
      r.error(
          "reserve",
          "must be smaller than deadline.default ("
              + HumanDuration.format(budget)
              + "), was "
              + HumanDuration.format(reserve));
    }
    if (!r.failed("default", "min_useful") && minUseful.compareTo(budget) >= 0) {
      r.error(
          "min_useful",
          "must be smaller than deadline.default ("
              + HumanDuration.format(budget)
              + "), was "
              + HumanDuration.format(minUseful));
    }
    return new DeadlineConfig(budget, reserve, minUseful);
  }

  private AdmissionConfig admission(MappingReader r) {
    MappingReader l = r.mapping("limit", LIMIT);
    AdmissionConfig.Limit dl = AdmissionConfig.Limit.DEFAULTS;
    AdmissionConfig.Algorithm algorithm =
        l.choice("algorithm", dl.algorithm(), AdmissionConfig.Algorithm.values());
    int initial = l.integer("initial", dl.initial(), 1, MAX_COUNT);
    int min = l.integer("min", dl.min(), 1, MAX_COUNT);
    int max = l.integer("max", dl.max(), 1, MAX_COUNT);
    if (!l.failed("min", "max") && max < min) {
      l.error("max", "must be >= limit.min (" + min + "), was " + max);
    } else if (!l.failed("min", "max", "initial") && (initial < min || initial > max)) {
      l.error(
          "initial",
          "must be in [limit.min, limit.max] = [" + min + ", " + max + "], was " + initial);
    }

    MappingReader q = r.mapping("queue", QUEUE);
    AdmissionConfig.Queue dq = AdmissionConfig.Queue.DEFAULTS;
    int queueMax = q.integer("max", dq.max(), 0, MAX_COUNT);
    Duration target = q.positiveDuration("target_sojourn", dq.targetSojourn());
    Duration interval = q.positiveDuration("interval", dq.interval());
    if (!q.failed("target_sojourn", "interval") && target.compareTo(interval) >= 0) {
      q.error(
          "target_sojourn",
          "must be smaller than queue.interval ("
              + HumanDuration.format(interval)
              + "), was "
              + HumanDuration.format(target));
    }

    MappingReader p = r.mapping("priority", PRIORITY);
    AdmissionConfig.Priority dp = AdmissionConfig.Priority.DEFAULTS;
    String header = p.string("header", dp.header());
    if (p.has("header") && !p.failed("header") && !HEADER_NAME.matcher(header).matches()) {
      p.error("header", "must be an HTTP header name, was '" + header + "'");
    }
    List<Cidr> trusted = dp.trustedSources();
    if (p.has("trusted_sources")) {
      trusted = new ArrayList<>();
      List<YamlNode> items = p.list("trusted_sources", "CIDRs like 10.0.0.0/8");
      for (int i = 0; i < items.size(); i++) {
        Cidr c = cidr(items.get(i), p.path("trusted_sources") + "[" + i + "]");
        if (c != null) {
          trusted.add(c);
        }
      }
    }
    int defaultPriority = p.integer("default", dp.defaultPriority(), 1, 4);

    MappingReader ra = r.mapping("retry_after", MIN_MAX);
    AdmissionConfig.RetryAfter dra = AdmissionConfig.RetryAfter.DEFAULTS;
    Duration raMin = ra.duration("min", dra.min());
    Duration raMax = ra.positiveDuration("max", dra.max());
    ra.checkOrder("min", raMin, "max", raMax, "retry_after.min");
    MappingReader pc = r.mapping("per_client", PER_CLIENT);
    int perClient = pc.integer("max_inflight", 0, 0, MAX_COUNT);
    return new AdmissionConfig(
        new AdmissionConfig.Limit(algorithm, initial, min, max),
        new AdmissionConfig.Queue(queueMax, target, interval),
        new AdmissionConfig.Priority(header, trusted, defaultPriority),
        new AdmissionConfig.RetryAfter(raMin, raMax),
        new AdmissionConfig.PerClient(perClient));
  }

  private @Nullable Cidr cidr(YamlNode node, String path) {
    if (!(node instanceof YamlNode.Scalar s)) {
      problems.add(
          ConfigProblem.error(
              path, "must be a CIDR like 10.0.0.0/8, was " + node.describe(), node.location()));
      return null;
    }
    try {
      return Cidr.parse(s.text());
    } catch (IllegalArgumentException e) {
      problems.add(ConfigProblem.error(path, String.valueOf(e.getMessage()), s.location()));
      return null;
    }
  }

  private OverloadConfig overload(MappingReader r) {
    MappingReader h = r.mapping("heap", HEAP);
    OverloadConfig.Heap dh = OverloadConfig.Heap.DEFAULTS;
    double shedLow = h.percentOrFraction("shed_low", dh.shedLow(), ShareRange.ABOVE_ZERO);
    double stop = h.percentOrFraction("stop_accepting", dh.stopAccepting(), ShareRange.ABOVE_ZERO);
    if (!h.failed("shed_low", "stop_accepting") && stop <= shedLow) {
      h.error(
          "stop_accepting",
          "must be greater than heap.shed_low ("
              + Percent.format(shedLow)
              + "), was "
              + Percent.format(stop));
    }
    MappingReader c = r.mapping("cpu", CPU);
    double cpuShedLow =
        c.percentOrFraction(
            "shed_low", OverloadConfig.Cpu.DEFAULTS.shedLow(), ShareRange.ABOVE_ZERO);
    MappingReader l = r.mapping("event_loop_lag", EVENT_LOOP_LAG);
    OverloadConfig.EventLoopLag dl = OverloadConfig.EventLoopLag.DEFAULTS;
    Duration lagShed = l.positiveDuration("shed_low", dl.shedLow());
    Duration lagStop = l.positiveDuration("stop_accepting", dl.stopAccepting());
    if (!l.failed("shed_low", "stop_accepting") && lagStop.compareTo(lagShed) <= 0) {
      l.error(
          "stop_accepting",
          "must be greater than event_loop_lag.shed_low ("
              + HumanDuration.format(lagShed)
              + "), was "
              + HumanDuration.format(lagStop));
    }
    return new OverloadConfig(
        new OverloadConfig.Heap(shedLow, stop),
        new OverloadConfig.Cpu(cpuShedLow),
        new OverloadConfig.EventLoopLag(lagShed, lagStop));
  }

  private CacheConfig cache(MappingReader r) {
    CacheConfig d = CacheConfig.DEFAULTS;
    return new CacheConfig(
        r.parsed("max_size", d.maxSize(), "a size like 256MiB", DataSize::parse),
        r.duration("stale_if_error", d.staleIfError()),
        r.duration("stale_while_revalidate", d.staleWhileRevalidate()));
  }

  // ---- origins ----

  private Map<String, OriginConfig> origins(
      MappingReader root, Map<String, MappingReader> readers) {
    Map<String, OriginConfig> origins = new LinkedHashMap<>();
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
      MappingReader o = MappingReader.of(e.value(), path, e.keyLocation(), problems, ORIGIN);
      readers.put(name, o);
      originKeys.put(name, e.keyLocation());
      origins.put(name, origin(name, o));
    }
    return origins;
  }

  private OriginConfig origin(String name, MappingReader o) {
    List<HostPort> hosts = new ArrayList<>();
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
        if (!(item instanceof YamlNode.Scalar s)) {
          problems.add(
              ConfigProblem.error(
                  path, "must be host:port, was " + item.describe(), item.location()));
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
          }
        } catch (IllegalArgumentException ex) {
          problems.add(ConfigProblem.error(path, String.valueOf(ex.getMessage()), s.location()));
        }
      }
    }
    OriginConfig.Balancer balancer =
        o.choice("balancer", OriginConfig.DEFAULT_BALANCER, OriginConfig.Balancer.values());
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
            l.integer("max_connections", dl.maxConnections(), 1, MAX_COUNT),
            l.integer("max_pending", dl.maxPending(), 0, MAX_COUNT),
            l.integer("max_requests", dl.maxRequests(), 1, MAX_COUNT));
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
        balancer,
        connectTimeout,
        timeout,
        limits,
        retry,
        hedge,
        breaker,
        outlier,
        healthCheck,
        slowStart,
        fallback);
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
            b.integer("min_concurrency", d.budget().minConcurrency(), 0, MAX_COUNT));
    MappingReader k = r.mapping("backoff", BACKOFF);
    Duration base = k.positiveDuration("base", d.backoff().base());
    Duration max = k.positiveDuration("max", d.backoff().max());
    k.checkOrder("base", base, "max", max, "backoff.base");
    return new RetryConfig(attempts, on, budget, new RetryConfig.Backoff(base, max));
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
    int minRequests = r.integer("min_requests", d.minRequests(), 1, MAX_COUNT);
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

  private void checkFallbacks(
      Map<String, OriginConfig> origins, Map<String, MappingReader> readers) {
    Set<String> reported = new HashSet<>();
    for (OriginConfig o : origins.values()) {
      String fallback = o.fallback();
      MappingReader r = readers.get(o.name());
      if (fallback == null || r == null) {
        continue;
      }
      if (fallback.equals(o.name())) {
        r.error("fallback", "must name another origin, was '" + fallback + "' (itself)");
      } else if (!origins.containsKey(fallback)) {
        r.error("fallback", unknownOrigin(fallback, origins.keySet()));
      } else if (!reported.contains(o.name())) {
        List<String> chain = new ArrayList<>(List.of(o.name()));
        String next = fallback;
        while (next != null && origins.containsKey(next) && !chain.contains(next)) {
          chain.add(next);
          next = origins.get(next).fallback();
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

  private static String unknownOrigin(String name, Set<String> known) {
    return "unknown origin '"
        + name
        + "' (known: "
        + (known.isEmpty() ? "none" : String.join(", ", known))
        + ")";
  }

  // ---- routes ----

  private List<RouteConfig> routes(
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
          MappingReader.of(item, "routes[" + i + "]", item.location(), problems, ROUTE);
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
    OriginConfig origin = null;
    String originName = "";
    if (r.missing("origin")) {
      problems.add(
          ConfigProblem.error(
              r.path("origin"),
              "required: the origin pool this route sends to (known: "
                  + (origins.isEmpty() ? "none" : String.join(", ", origins.keySet()))
                  + ")",
              r.location()));
    } else if (r.has("origin")) {
      originName = r.string("origin", "");
      if (!r.failed("origin")) {
        origin = origins.get(originName);
        if (origin == null) {
          r.error("origin", unknownOrigin(originName, origins.keySet()));
        }
      }
    }
    Duration timeout = r.positiveDuration("timeout", deadline.defaultBudget());
    int priority = r.integer("priority", admission.priority().defaultPriority(), 1, 4);
    BreakerConfig inherited = origin == null ? BreakerConfig.DEFAULTS : origin.breaker();
    BreakerConfig breaker =
        r.has("breaker")
            ? breakers.read(r.mapping("breaker", BreakerConfigReader.KEYS), inherited)
            : inherited;
    RouteConfig.Cache cache = RouteConfig.Cache.DEFAULTS;
    if (r.isOff("cache")) {
      cache = RouteConfig.Cache.OFF;
    } else if (r.has("cache")) {
      MappingReader c = r.switchedOn("cache", ROUTE_CACHE);
      cache =
          new RouteConfig.Cache(
              true, c.duration("default_ttl", RouteConfig.Cache.DEFAULTS.defaultTtl()));
    }
    if (origin != null && !r.failed("timeout") && origin.timeout().compareTo(timeout) >= 0) {
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
    if (origin == null) {
      return null;
    }
    return new RouteConfig(
        index,
        new RouteConfig.Match(host, prefix),
        originName,
        timeout,
        priority,
        breaker,
        cache,
        retryNonIdempotent);
  }

  private void warnUnusedOrigins(
      Map<String, OriginConfig> origins,
      Map<String, MappingReader> readers,
      List<RouteConfig> routes) {
    Set<String> used = new HashSet<>();
    routes.forEach(r -> used.add(r.origin()));
    origins
        .values()
        .forEach(o -> {
          if (o.fallback() != null) {
            used.add(o.fallback());
          }
        });
    for (String name : origins.keySet()) {
      MappingReader r = readers.get(name);
      if (!used.contains(name) && r != null) {
        problems.add(
            ConfigProblem.warning(
                r.path(), "not used by any route or fallback", originKeys.get(name)));
      }
    }
  }
}
