package dev.parapet.proxy.config;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.outcome.StatusSet;
import dev.parapet.proxy.config.MappingReader.ShareRange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a {@code breaker:} block: an origin's over DESIGN.md's defaults, or a route's overrides
 * over its origin's breaker, field by field and nested blocks included, so {@code breaker: {slow:
 * {rate: 20%}}} on a route keeps the origin's {@code slow.threshold}. Checks across fields ({@code
 * half_open.required <= probes}, {@code open.max >= open.base}, 1 ms per bucket) run on the merged
 * values; when one fails, the merged value falls back to a consistent one so a route that inherits
 * it does not repeat the error. Finally the core's {@link BreakerPolicy} builder checks the result,
 * and anything it refuses is reported at a YAML path too.
 */
final class BreakerConfigReader {
  static final Set<String> KEYS =
      MappingReader.keys(
          "scope",
          "mode",
          "window",
          "buckets",
          "window_size",
          "min_requests",
          "failure_rate",
          "failure_statuses",
          "slow",
          "connect_failures",
          "open",
          "half_open",
          "ramp",
          "flapping",
          "probe");
  private static final Set<String> ROUTE_KEYS_UNDER_SHARED_SCOPE =
      Set.of("scope", "failure_statuses", "slow");
  private static final Set<String> SLOW =
      MappingReader.keys("threshold", "weight", "rate", "floor");
  private static final Set<String> CONNECT_FAILURES = MappingReader.keys("count", "within");
  private static final Set<String> OPEN = MappingReader.keys("base", "max", "jitter");
  private static final Set<String> HALF_OPEN =
      MappingReader.keys("probes", "spacing", "required", "max_latency", "probe_timeout");
  private static final Set<String> RAMP = MappingReader.keys("from", "over");
  private static final Set<String> FLAPPING = MappingReader.keys("opens", "within");
  private static final Set<String> PROBE = MappingReader.keys("path");
  private static final Pattern RELATIVE =
      Pattern.compile("(\\d{1,3}(?:\\.\\d{1,3})?)\\s*x\\s*p(\\d{1,2}(?:\\.\\d{1,3})?)");
  private static final Pattern CORE_MESSAGE = Pattern.compile("(\\S+) : (.*) \\(expected: (.*)\\)");

  private final List<ConfigProblem> problems;

  BreakerConfigReader(List<ConfigProblem> problems) {
    this.problems = problems;
  }

  /**
   * Reads a breaker block over {@code base}: DESIGN.md's defaults for an origin, the origin's
   * breaker for a route's overrides. Checks across fields run on the merged result.
   */
  BreakerConfig read(MappingReader r, BreakerConfig base) {
    return read(r, base, false);
  }

  /**
   * Reads a route's {@code breaker:} overrides over its origin's breaker. A route's breaker of its
   * own exists only with {@code scope: route}; under a shared scope ({@code origin}, {@code host},
   * {@code shard}) only the keys that judge the route's responses ({@code failure_statuses}, {@code
   * slow.threshold}, {@code slow.floor}) and {@code scope} itself act, and any other key is refused
   * rather than dropped.
   */
  BreakerConfig readRoute(MappingReader r, BreakerConfig base) {
    return read(r, base, true);
  }

  private BreakerConfig read(MappingReader r, BreakerConfig base, boolean route) {
    Scope scope = r.choice("scope", base.scope(), Scope.values());
    Mode mode = r.choice("mode", base.mode(), Mode.values());
    BreakerPolicy.WindowKind kind = base.windowKind();
    Duration window = base.window();
    int windowSize = base.windowSize();
    if (r.has("window") && r.has("window_size")) {
      r.error(
          "window_size",
          "must not be set together with window: window: 10s is a time window,"
              + " window_size: 100 a window of the last 100 calls");
    } else if (r.has("window")) {
      window = r.positiveDuration("window", base.window());
      kind = BreakerPolicy.WindowKind.TIME;
    } else if (r.has("window_size")) {
      windowSize = r.integer("window_size", base.windowSize(), 1, MappingReader.MAX_COUNT);
      kind = BreakerPolicy.WindowKind.COUNT;
    }
    int buckets = r.integer("buckets", base.buckets(), 1, 10_000);
    if (kind == BreakerPolicy.WindowKind.TIME
        && !r.failed("window", "buckets")
        && window.toMillis() < buckets) {
      r.error(
          "buckets",
          "must leave at least 1ms per bucket (window "
              + HumanDuration.format(window)
              + " allows at most "
              + window.toMillis()
              + "), was "
              + buckets);
      // Keep the merged result consistent, so a route inheriting it does not repeat the error.
      buckets = (int) Math.max(1, Math.min(base.buckets(), window.toMillis()));
    }
    int minRequests = r.integer("min_requests", base.minRequests(), 1, MappingReader.MAX_COUNT);
    double failureRate = r.percent("failure_rate", base.failureRate(), ShareRange.ABOVE_ZERO);
    StatusSet failureStatuses = failureStatuses(r, base.failureStatuses());

    MappingReader s = r.mapping("slow", SLOW);
    BreakerConfig.Slow bs = base.slow();
    Duration floor =
        bs.threshold() instanceof BreakerConfig.SlowThreshold.Relative rel
            ? rel.floor()
            : BreakerConfig.SlowThreshold.DEFAULT_FLOOR;
    floor = s.positiveDuration("floor", floor);
    Duration floorFinal = floor;
    BreakerConfig.SlowThreshold threshold = bs.threshold();
    if (s.has("threshold")) {
      threshold =
          s.parsed(
              "threshold",
              bs.threshold(),
              "a duration like 500ms or a multiple of a percentile like 3x p95",
              text -> slowThreshold(text, floorFinal));
    } else if (s.has("floor") && threshold instanceof BreakerConfig.SlowThreshold.Relative rel) {
      threshold = new BreakerConfig.SlowThreshold.Relative(rel.multiplier(), rel.quantile(), floor);
    }
    if (s.has("floor")
        && !s.failed("floor", "threshold")
        && threshold instanceof BreakerConfig.SlowThreshold.Absolute a) {
      s.error(
          "floor",
          "has no effect with the absolute slow.threshold "
              + HumanDuration.format(a.threshold())
              + ": the floor bounds a relative threshold like 3x p95");
    }
    BreakerConfig.Slow slow =
        new BreakerConfig.Slow(
            threshold,
            s.percentOrFraction("weight", bs.weight(), ShareRange.ANY),
            s.percent("rate", bs.rate(), ShareRange.ABOVE_ZERO));

    MappingReader c = r.mapping("connect_failures", CONNECT_FAILURES);
    BreakerConfig.ConnectFailures connectFailures =
        new BreakerConfig.ConnectFailures(
            c.integer("count", base.connectFailures().count(), 0, 10_000),
            c.positiveDuration("within", base.connectFailures().within()));

    MappingReader o = r.mapping("open", OPEN);
    Duration openBase = o.positiveDuration("base", base.open().base());
    Duration openMax = o.positiveDuration("max", base.open().max());
    if (!o.checkOrder("base", openBase, "max", openMax, "open.base")) {
      // Keep the merged result consistent, so a route inheriting it does not repeat the error.
      openMax = openBase.compareTo(base.open().max()) > 0 ? openBase : base.open().max();
    }
    double jitter = o.percent("jitter", base.open().jitter(), ShareRange.BELOW_ALL);

    MappingReader h = r.mapping("half_open", HALF_OPEN);
    BreakerConfig.HalfOpen bh = base.halfOpen();
    int probes = h.integer("probes", bh.probes(), 1, 1000);
    Duration spacing = h.duration("spacing", bh.spacing());
    int required = h.integer("required", bh.required(), 1, 1000);
    if (!h.failed("probes", "required") && required > probes) {
      h.error("required", "must be in [1, half_open.probes (" + probes + ")], was " + required);
      required = Math.min(bh.required(), probes);
    }
    Duration maxLatency = h.positiveDuration("max_latency", bh.maxLatency());
    Duration probeTimeout = h.positiveDuration("probe_timeout", bh.probeTimeout());

    MappingReader rp = r.mapping("ramp", RAMP);
    BreakerConfig.Ramp ramp =
        new BreakerConfig.Ramp(
            rp.percent("from", base.ramp().from(), ShareRange.ABOVE_ZERO),
            rp.duration("over", base.ramp().over()));

    MappingReader f = r.mapping("flapping", FLAPPING);
    BreakerConfig.Flapping flapping =
        new BreakerConfig.Flapping(
            f.integer("opens", base.flapping().opens(), 1, 9_999),
            f.positiveDuration("within", base.flapping().within()));

    String probePath = base.probePath();
    if (r.isOff("probe")) {
      probePath = null;
    } else if (r.has("probe")) {
      MappingReader pr = r.mapping("probe", PROBE);
      if (pr.missing("path")) {
        problems.add(
            ConfigProblem.error(
                pr.path("path"),
                "required: the path synthetic probes request, like /healthz (or probe: off)",
                pr.location()));
      } else if (pr.has("path")) {
        String p = pr.string("path", "/healthz");
        if (!pr.failed("path") && !p.startsWith("/")) {
          pr.error("path", "must start with '/', was '" + p + "'");
        } else if (!pr.failed("path")) {
          probePath = p;
        }
      }
    }

    if (route && scope != Scope.ROUTE) {
      String why =
          "has no effect: this route's breaker is shared (scope: "
              + scope.name().toLowerCase(Locale.ROOT)
              + "); set scope: route for a breaker of the route's own, or move it to the origin";
      for (String key : KEYS) {
        if (r.has(key) && !r.failed(key) && !ROUTE_KEYS_UNDER_SHARED_SCOPE.contains(key)) {
          r.error(key, why);
        }
      }
      for (String key : SLOW) {
        if (s.has(key) && !s.failed(key) && !key.equals("threshold") && !key.equals("floor")) {
          s.error(key, why);
        }
      }
    }

    BreakerConfig result =
        new BreakerConfig(
            scope,
            mode,
            kind,
            window,
            buckets,
            windowSize,
            minRequests,
            failureRate,
            failureStatuses,
            slow,
            connectFailures,
            new BreakerConfig.Open(openBase, openMax, jitter),
            new BreakerConfig.HalfOpen(probes, spacing, required, maxLatency, probeTimeout),
            ramp,
            flapping,
            probePath);
    if (errorCount() == 0) {
      // The core checks the same rules; a disagreement is still reported at a YAML path. Only on
      // an otherwise clean file: after an error, fields hold fallback values the core may refuse.
      try {
        result.toBreakerPolicy();
      } catch (IllegalArgumentException e) {
        for (String part : String.valueOf(e.getMessage()).split("; ", -1)) {
          problems.add(coreProblem(r, part));
        }
      }
    }
    return result;
  }

  /**
   * {@code failure_statuses: [500-599, 429]}: codes ({@code 503}), classes ({@code 5xx}) and ranges
   * ({@code 500-504}); an empty list counts no status as a failure (only timeouts and connection
   * errors then). Replaces the inherited set as a whole.
   */
  private StatusSet failureStatuses(MappingReader r, StatusSet inherited) {
    if (!r.has("failure_statuses")) {
      return inherited;
    }
    List<String> entries = new ArrayList<>();
    boolean bad = false;
    List<YamlNode> items = r.list("failure_statuses", "statuses");
    for (int i = 0; i < items.size(); i++) {
      YamlNode item = items.get(i);
      String path = r.path("failure_statuses") + "[" + i + "]";
      String expected = "a status like 503, a class like 5xx or a range like 500-504";
      if (!(item instanceof YamlNode.Scalar s)) {
        problems.add(
            ConfigProblem.error(
                path, "must be " + expected + ", was " + item.describe(), item.location()));
        bad = true;
        continue;
      }
      try {
        StatusSet.parse(List.of(s.text()));
        entries.add(s.text().trim());
      } catch (IllegalArgumentException e) {
        problems.add(
            ConfigProblem.error(
                path,
                "must be " + expected + " within 100-599, was " + s.describe(),
                s.location()));
        bad = true;
      }
    }
    return bad ? inherited : StatusSet.parse(entries);
  }

  /** Maps the core's "field : value (expected: X)" onto "path.field: must be X, was value". */
  static ConfigProblem coreProblem(MappingReader r, String coreMessage) {
    Matcher m = CORE_MESSAGE.matcher(coreMessage);
    if (m.matches()) {
      return ConfigProblem.error(
          r.path(m.group(1)), "must be " + m.group(3) + ", was " + m.group(2), r.location());
    }
    return ConfigProblem.error(r.path(), coreMessage, r.location());
  }

  private static BreakerConfig.SlowThreshold slowThreshold(String text, Duration floor) {
    Matcher m = RELATIVE.matcher(text.trim().toLowerCase(Locale.ROOT));
    if (m.matches()) {
      double multiplier = Double.parseDouble(m.group(1));
      double quantile = Double.parseDouble(m.group(2)) / 100.0;
      if (multiplier < 1.0 || quantile <= 0) {
        throw new IllegalArgumentException(
            "must be a multiple >= 1 of a percentile like 3x p95, was '" + text + "'");
      }
      return new BreakerConfig.SlowThreshold.Relative(multiplier, quantile, floor);
    }
    Duration d;
    try {
      d = HumanDuration.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "must be a duration like 500ms or a multiple of a percentile like 3x p95, was '"
              + text
              + "'",
          e);
    }
    if (d.isZero()) {
      throw new IllegalArgumentException("must be > 0s, was 0s");
    }
    return new BreakerConfig.SlowThreshold.Absolute(d);
  }

  private int errorCount() {
    int n = 0;
    for (ConfigProblem p : problems) {
      if (p.severity() == ConfigProblem.Severity.ERROR) {
        n++;
      }
    }
    return n;
  }
}
