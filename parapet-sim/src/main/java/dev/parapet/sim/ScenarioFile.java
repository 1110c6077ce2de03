package dev.parapet.sim;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.deadline.DeadlinePolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads users' scenarios and breaker policies from YAML (format in docs/simulator.md). Every error
 * is collected with its path and reported at once. Breaker fields use the proxy configuration's
 * names (DESIGN "Configuration"), and are validated by the core's {@link BreakerPolicy.Builder},
 * whose messages are prefixed with the YAML path.
 */
final class ScenarioFile {
  private static final Pattern ERROR_SEPARATOR = Pattern.compile("; ");
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private ScenarioFile() {}

  static Scenario load(Path file) throws IOException, ConfigException {
    return parse(Files.readString(file), file.toString());
  }

  static Scenario parse(String yaml, String source) throws ConfigException {
    List<String> errors = new ArrayList<>();
    YamlCursor root = new YamlCursor(readTree(yaml, source), "", errors);
    root.allowOnly(
        Set.of("name", "description", "fleet", "traffic", "cache", "origin", "tick", "variants"));
    String name = root.get("name").requiredText();
    String description = root.get("description").text("user scenario");

    YamlCursor fleet = root.get("fleet");
    fleet.allowOnly(Set.of("pops", "servers_per_pop", "workers_per_server", "rate_per_server"));
    int pops = (int) fleet.get("pops").integer(1, 1, 100_000);
    int serversPerPop = (int) fleet.get("servers_per_pop").integer(1, 1, 10_000);
    int workers = (int) fleet.get("workers_per_server").integer(1000, 1, 10_000_000);
    double rate = fleet.get("rate_per_server").number(100, 0, 10_000_000);

    YamlCursor traffic = root.get("traffic");
    traffic.allowOnly(Set.of("sick_share", "healthy_median"));
    double sickShare = traffic.get("sick_share").rate(1.0, 0, 1);
    double healthyMedian = millis(traffic.get("healthy_median").duration(Duration.ofMillis(50)));

    YamlCursor cacheNode = root.get("cache");
    cacheNode.allowOnly(Set.of("hit_ratio", "stale_if_error"));
    EdgeCache cache =
        new EdgeCache(
            cacheNode.get("hit_ratio").rate(0, 0, 1),
            cacheNode.get("stale_if_error").rate(0, 0, 1));

    YamlCursor origin = root.get("origin");
    origin.allowOnly(Set.of("workers", "queue", "abandoned", "slow_threshold", "timeline"));
    OriginCapacity capacity = capacity(origin);
    double slow = millis(origin.get("slow_threshold").duration(Duration.ofMillis(500)));
    List<OriginPhase> timeline = new ArrayList<>();
    YamlCursor tl = origin.get("timeline");
    if (!tl.present()) {
      tl.error("required (expected: a list of phases)");
    }
    for (YamlCursor p : tl.list()) {
      timeline.add(phase(p));
    }
    if (tl.present() && timeline.isEmpty()) {
      tl.error("must not be empty");
    }
    YamlCursor tickNode = root.get("tick");
    Duration tick = tickNode.duration(Duration.ofMillis(10));
    if (tick.toMillis() < 1 || tick.toMillis() > 1000) {
      tickNode.error("must be in [1ms, 1s], was " + tick.toMillis() + "ms");
    }

    List<Variant> variants = new ArrayList<>();
    YamlCursor vs = root.get("variants");
    if (!vs.present()) {
      vs.error("required (expected: a list of variants)");
    }
    for (YamlCursor v : vs.list()) {
      v.allowOnly(Set.of("name", "breaker", "retry", "timeouts", "limit", "hedge", "deadline"));
      String vname = v.get("name").requiredText();
      YamlCursor b = v.get("breaker");
      BreakerPolicy policy = b.present() ? breaker(b) : null;
      YamlCursor r = v.get("retry");
      r.allowOnly(Set.of("mode", "ratio", "min_concurrency"));
      String modeText = r.get("mode").text("none");
      RetryMode mode = RetryMode.NONE;
      try {
        mode = RetryMode.valueOf(modeText.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        r.get("mode").error("must be one of none, naive, budget, was '" + modeText + "'");
      }
      double ratio = r.get("ratio").rate(0.20, 0, 1);
      int min = (int) r.get("min_concurrency").integer(5, 0, 1_000_000);
      List<Long> timeouts = new ArrayList<>();
      YamlCursor ts = v.get("timeouts");
      for (YamlCursor t : ts.list()) {
        timeouts.add((long) millis(t.duration(Duration.ofSeconds(1))));
      }
      if (!ts.present()) {
        timeouts.add(10_000L);
      } else if (timeouts.isEmpty() || timeouts.size() > 3) {
        ts.error("must list 1 to 3 timeouts (edge, shield, connector), was " + timeouts.size());
        timeouts = List.of(10_000L);
      }
      LimitSpec limit = null;
      YamlCursor l = v.get("limit");
      if (l.present()) {
        l.allowOnly(Set.of("algorithm", "initial", "min", "max", "queue"));
        String algorithm = l.get("algorithm").text("gradient2");
        int initial = (int) l.get("initial").integer(20, 1, 1_000_000);
        int lmin = (int) l.get("min").integer(1, 1, 1_000_000);
        int lmax = (int) l.get("max").integer(1000, 1, 1_000_000);
        int queue = (int) l.get("queue").integer(0, 0, 1_000_000);
        try {
          limit = new LimitSpec(algorithm, initial, lmin, lmax, queue);
        } catch (IllegalArgumentException e) {
          l.error(String.valueOf(e.getMessage()));
        }
      }
      boolean hedge = v.get("hedge").bool(false);
      YamlCursor d = v.get("deadline");
      d.allowOnly(Set.of("reserve", "min_useful"));
      DeadlinePolicy defaults = DeadlinePolicy.withDefaults();
      Duration reserve = d.get("reserve").duration(Duration.ofNanos(defaults.reserveNanos()));
      Duration minUseful =
          d.get("min_useful").duration(Duration.ofNanos(defaults.minUsefulNanos()));
      DeadlinePolicy deadlines = defaults;
      try {
        deadlines = new DeadlinePolicy(reserve, minUseful);
      } catch (IllegalArgumentException e) {
        d.error(String.valueOf(e.getMessage()));
      }
      variants.add(new Variant(vname, policy, mode, ratio, min, timeouts, limit, hedge, deadlines));
    }
    if (vs.present() && variants.isEmpty()) {
      vs.error("must not be empty");
    }
    if (!errors.isEmpty()) {
      throw new ConfigException(source, errors);
    }
    return new Scenario(
        name,
        description,
        pops,
        serversPerPop,
        workers,
        rate,
        sickShare,
        healthyMedian,
        capacity,
        cache,
        slow,
        (int) tick.toMillis(),
        timeline,
        variants);
  }

  /** {@code origin: workers, queue, abandoned}: unlimited workers unless {@code workers} is set. */
  private static OriginCapacity capacity(YamlCursor origin) {
    YamlCursor w = origin.get("workers");
    YamlCursor q = origin.get("queue");
    YamlCursor a = origin.get("abandoned");
    int workers = (int) w.integer(0, 0, 10_000_000);
    int queue = OriginCapacity.UNBOUNDED;
    if (q.present()) {
      if (q.isText() && "unbounded".equals(q.text("unbounded"))) {
        queue = OriginCapacity.UNBOUNDED;
      } else {
        queue = (int) q.integer(0, 0, 100_000_000);
      }
    }
    String abandoned = a.text("drop");
    boolean serve = false;
    switch (abandoned) {
      case "drop" -> serve = false;
      case "serve" -> serve = true;
      default -> a.error("must be drop or serve, was '" + abandoned + "'");
    }
    if (workers == 0) {
      if (q.present()) {
        q.error("needs workers (expected: origin.workers > 0 for a queue to form)");
      }
      if (a.present()) {
        a.error("needs workers (expected: origin.workers > 0 for work to wait)");
      }
      return OriginCapacity.UNLIMITED;
    }
    return new OriginCapacity(workers, queue, serve);
  }

  /** One phase of the origin's timeline: its service-time distribution and its faults. */
  private static OriginPhase phase(YamlCursor p) {
    p.allowOnly(
        Set.of(
            "name",
            "duration",
            "distribution",
            "median",
            "mean",
            "sigma",
            "error_rate",
            "hang_rate",
            "down"));
    String name = p.get("name").requiredText();
    double seconds = millis(p.get("duration").duration(Duration.ofSeconds(10))) / 1000.0;
    YamlCursor d = p.get("distribution");
    String dist = d.text("lognormal");
    OriginPhase.Distribution distribution = OriginPhase.Distribution.LOGNORMAL;
    switch (dist) {
      case "lognormal" -> distribution = OriginPhase.Distribution.LOGNORMAL;
      case "exponential" -> distribution = OriginPhase.Distribution.EXPONENTIAL;
      case "fixed" -> distribution = OriginPhase.Distribution.FIXED;
      default -> d.error("must be one of lognormal, exponential, fixed, was '" + dist + "'");
    }
    YamlCursor median = p.get("median");
    YamlCursor mean = p.get("mean");
    YamlCursor sigma = p.get("sigma");
    double time = 100;
    switch (distribution) {
      case LOGNORMAL -> {
        if (mean.present()) {
          mean.error("not for a log-normal service time (expected: median and sigma)");
        }
        time = millis(median.duration(Duration.ofMillis(100)));
      }
      case EXPONENTIAL -> {
        if (median.present()) {
          median.error("not for an exponential service time (expected: mean)");
        }
        time = millis(mean.duration(Duration.ofMillis(100)));
      }
      case FIXED -> {
        if (median.present() && mean.present()) {
          mean.error("a fixed service time takes median or mean, not both");
        }
        time = millis((mean.present() ? mean : median).duration(Duration.ofMillis(100)));
      }
    }
    if (sigma.present() && distribution != OriginPhase.Distribution.LOGNORMAL) {
      sigma.error("only for distribution: lognormal, was " + dist);
    }
    return new OriginPhase(
        name,
        seconds,
        time,
        sigma.number(0.3, 0, 5),
        p.get("error_rate").rate(0, 0, 1),
        p.get("hang_rate").rate(0, 0, 1),
        p.get("down").bool(false),
        distribution);
  }

  /** A breaker policy file: the proxy's {@code breaker:} block, at the top level or under it. */
  static BreakerPolicy parsePolicy(String yaml, String source) throws ConfigException {
    List<String> errors = new ArrayList<>();
    YamlCursor root = new YamlCursor(readTree(yaml, source), "", errors);
    YamlCursor b = root.get("breaker").present() ? root.get("breaker") : root;
    BreakerPolicy p = breaker(b);
    if (!errors.isEmpty() || p == null) {
      throw new ConfigException(source, errors);
    }
    return p;
  }

  private static JsonNode readTree(String yaml, String source) throws ConfigException {
    try {
      JsonNode n = YAML.readTree(yaml);
      if (n == null || n.isMissingNode()) {
        throw new ConfigException(source, List.of("(root): empty document (expected: a mapping)"));
      }
      return n;
    } catch (JsonProcessingException e) {
      throw new ConfigException(
          source, List.of("(root): not valid YAML: " + e.getOriginalMessage()));
    }
  }

  private static double millis(Duration d) {
    return d.toNanos() / 1e6;
  }

  /** Maps a {@code breaker:} block onto the core's builder; null when the builder refused it. */
  static @Nullable BreakerPolicy breaker(YamlCursor b) {
    b.allowOnly(
        Set.of(
            "mode",
            "window",
            "buckets",
            "min_requests",
            "failure_rate",
            "slow",
            "connect_failures",
            "open",
            "half_open",
            "ramp"));
    BreakerPolicy d = BreakerPolicy.defaults();
    BreakerPolicy.Builder builder = d.toBuilder();
    builder.timeWindow(
        b.get("window").duration(d.window()),
        (int) b.get("buckets").integer(d.buckets(), 1, 10_000));
    builder.minRequests((int) b.get("min_requests").integer(d.minRequests(), 1, Integer.MAX_VALUE));
    builder.failureRate(b.get("failure_rate").rate(d.failureRate(), 0, 1));
    YamlCursor slow = b.get("slow");
    slow.allowOnly(Set.of("rate", "weight"));
    builder.slowRate(slow.get("rate").rate(d.slowRate(), 0, 1));
    builder.slowWeight(slow.get("weight").number(d.slowWeight(), 0, 1));
    YamlCursor cf = b.get("connect_failures");
    cf.allowOnly(Set.of("count", "within"));
    builder.connectFailures(
        (int) cf.get("count").integer(d.connectFailures(), 0, 10_000),
        cf.get("within").duration(d.connectFailuresWithin()));
    YamlCursor open = b.get("open");
    open.allowOnly(Set.of("base", "max", "jitter"));
    builder.open(
        open.get("base").duration(d.openBase()),
        open.get("max").duration(d.openMax()),
        open.get("jitter").rate(d.openJitter(), 0, 0.99));
    YamlCursor ho = b.get("half_open");
    ho.allowOnly(Set.of("probes", "spacing", "required", "max_latency"));
    builder.halfOpen(
        (int) ho.get("probes").integer(d.probes(), 1, 1000),
        ho.get("spacing").duration(d.probeSpacing()),
        (int) ho.get("required").integer(d.probesRequired(), 1, 1000),
        ho.get("max_latency").duration(d.probeMaxLatency()));
    YamlCursor ramp = b.get("ramp");
    ramp.allowOnly(Set.of("from", "over"));
    builder.ramp(
        ramp.get("from").rate(d.rampFrom(), 0, 1), ramp.get("over").duration(d.rampOver()));
    String mode = b.get("mode").text("enforce");
    switch (mode) {
      case "enforce" -> builder.mode(Mode.ENFORCE);
      case "shadow" -> builder.mode(Mode.SHADOW);
      default -> b.get("mode").error("must be enforce or shadow, was '" + mode + "'");
    }
    try {
      return builder.build();
    } catch (IllegalArgumentException e) {
      for (String part : ERROR_SEPARATOR.split(String.valueOf(e.getMessage()), -1)) {
        b.error(part);
      }
      return null;
    }
  }
}
