package dev.parapet.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.sim.replay.LogFormat;
import dev.parapet.sim.replay.LogReplay;
import dev.parapet.sim.replay.LogSource;
import dev.parapet.sim.replay.ReplayOptions;
import dev.parapet.sim.replay.ReplayPolicy;
import dev.parapet.sim.replay.ReplayReport;
import dev.parapet.sim.replay.ReplayResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code parapet sim replay}: access logs through shadow breakers, several policies in one read.
 */
@Command(
    name = "replay",
    description =
        "Replays access logs (CSV, Parapet's JSON lines, nginx combined, Envoy; gzip or zstd)"
            + " through a shadow breaker per route, for one or several policies in one read.")
final class ReplayCommand implements Callable<Integer> {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final long PROGRESS_NANOS = 2_000_000_000L;

  @Spec CommandLine.Model.@Nullable CommandSpec spec;

  @Parameters(
      arity = "1..*",
      description = "access logs: files, globs (access-*.log.zst) or - for standard input")
  List<String> logs = new ArrayList<>();

  @Option(
      names = "--policy",
      description = "breaker policy YAML; repeat to compare policies (default: the core defaults)")
  List<Path> policies = new ArrayList<>();

  @Option(
      names = "--sweep",
      description =
          "one breaker field over several values, e.g. failure_rate=20%,35%,50% (on the first"
              + " --policy, or the defaults)")
  @Nullable String sweep;

  @Option(names = "--format", description = "auto, csv, json, nginx or envoy (default auto)")
  String format = "auto";

  @Option(names = "--slow", description = "slow-call threshold in ms (default ${DEFAULT-VALUE})")
  long slowMillis = 500;

  @Option(
      names = "--window",
      description = "reorder window: how far out of order lines may be (default ${DEFAULT-VALUE})")
  String window = "5s";

  @Option(
      names = "--max-latency",
      description =
          "longest latency expected, for logs written at the end of requests (default"
              + " ${DEFAULT-VALUE})")
  String maxLatency = "60s";

  @Option(names = "--from", description = "first start time replayed: ISO-8601 or epoch seconds")
  @Nullable String from;

  @Option(names = "--to", description = "end of the time range (exclusive)")
  @Nullable String to;

  @Option(
      names = "--max-bad-lines",
      description = "bad lines skipped before stopping (default ${DEFAULT-VALUE})")
  long maxBadLines;

  @Option(
      names = "--route-depth",
      description = "path segments naming a route in nginx/Envoy logs (default ${DEFAULT-VALUE})")
  int routeDepth = 1;

  @Option(names = "--time", description = "start or end: what the log's time field is")
  @Nullable String time;

  @Option(
      names = "--trouble-rate",
      description = "failed-or-slow share that makes a 10 s bin trouble (default ${DEFAULT-VALUE})")
  String troubleRate = "20%";

  @Option(
      names = "--threads",
      description =
          "threads for the policies beside the reader (default: one per policy, at most"
              + " the cores less one)")
  int threads = -1;

  @Option(names = "--quiet", description = "no progress on standard error")
  boolean quiet;

  @Option(names = "--html", description = "HTML report with the timeline of each route")
  @Nullable Path html;

  @Override
  public Integer call() {
    PrintWriter out = SimCli.out(spec);
    PrintWriter err = SimCli.err(spec);
    try {
      List<ReplayPolicy> ps = policies();
      ReplayOptions o = options(ps.size());
      List<LogSource> sources = LogSource.expand(logs);
      long wall0 = System.nanoTime();
      LogReplay.Progress progress = quiet ? null : progress(err, wall0);
      ReplayResult r = LogReplay.run(sources, ps, o, progress);
      long wall = System.nanoTime() - wall0;
      out.print(ReplayReport.text(r, o));
      Path htmlFile = html;
      if (htmlFile != null) {
        SimCli.write(htmlFile, HtmlReport.replay(r, o));
        out.println("wrote " + htmlFile);
      }
      out.flush();
      err.printf(
          Locale.ROOT,
          "replayed %d lines in %.2f s (%.0f lines/s), %d policies%n",
          r.lines(),
          wall / 1e9,
          r.lines() / Math.max(1e-9, wall / 1e9),
          ps.size());
      return 0;
    } catch (ConfigException | IllegalArgumentException | IOException e) {
      err.println(e.getMessage());
      return 2;
    }
  }

  private static LogReplay.Progress progress(PrintWriter err, long wall0) {
    long[] last = {wall0, 0};
    return (lines, bytes, logTime) -> {
      long now = System.nanoTime();
      if (now - last[0] >= PROGRESS_NANOS) {
        double rate = (lines - last[1]) / ((now - last[0]) / 1e9);
        err.printf(
            Locale.ROOT,
            "replay: %,d lines, %.0f lines/s, %.1f MB read, log time %s%n",
            lines,
            rate,
            bytes / 1e6,
            Instant.ofEpochSecond(
                Math.floorDiv(logTime, 1_000_000_000L), Math.floorMod(logTime, 1_000_000_000L)));
        err.flush();
        last[0] = now;
        last[1] = lines;
      }
    };
  }

  private ReplayOptions options(int policyCount) {
    int n = threads;
    if (n < 0) {
      n = Math.min(policyCount, Math.max(1, Runtime.getRuntime().availableProcessors() - 1));
    }
    Boolean timeIsEnd = null;
    String t = time;
    if (t != null) {
      if (!t.equals("start") && !t.equals("end")) {
        throw new IllegalArgumentException("--time : " + t + " (expected: start or end)");
      }
      timeIsEnd = t.equals("end");
    }
    return ReplayOptions.defaults()
        .withFormat(LogFormat.parse(format))
        .withSlow(Duration.ofMillis(slowMillis))
        .withWindow(duration("--window", window), duration("--max-latency", maxLatency))
        .withRange(instant("--from", from), instant("--to", to))
        .withMaxBadLines(maxBadLines)
        .withRouteDepth(routeDepth)
        .withTimeIsEnd(timeIsEnd)
        .withTrouble(rate("--trouble-rate", troubleRate), Duration.ofSeconds(10), 10)
        .withThreads(n);
  }

  private List<ReplayPolicy> policies() throws IOException, ConfigException {
    List<ReplayPolicy> out = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (Path p : policies) {
      if (!Files.isRegularFile(p)) {
        throw new IllegalArgumentException("--policy : " + p + " (expected: a readable YAML file)");
      }
      BreakerPolicy bp = ScenarioFile.parsePolicy(Files.readString(p), p.toString());
      Path fn = p.getFileName();
      String name = fn == null ? p.toString() : fn.toString();
      if (!names.add(name)) {
        name = p.toString();
        names.add(name);
      }
      out.add(new ReplayPolicy(name, bp));
    }
    String s = sweep;
    if (s != null) {
      int eq = s.indexOf('=');
      if (eq <= 0 || eq == s.length() - 1) {
        throw new IllegalArgumentException(
            "--sweep : " + s + " (expected: FIELD=V1,V2,..., e.g. failure_rate=20%,35%,50%)");
      }
      String field = s.substring(0, eq).strip();
      String base = policies.isEmpty() ? "{}" : Files.readString(policies.get(0));
      out.clear();
      for (String v : s.substring(eq + 1).split(",")) {
        String value = v.strip();
        String name = field + "=" + value;
        out.add(new ReplayPolicy(name, ScenarioFile.parsePolicy(swept(base, field, value), name)));
      }
    }
    if (out.isEmpty()) {
      out.add(new ReplayPolicy("defaults", BreakerPolicy.defaults()));
    }
    return out;
  }

  /** {@code base} with {@code field} of its breaker block set to {@code value}, as YAML. */
  private static String swept(String base, String field, String value) throws IOException {
    JsonNode tree = YAML.readTree(base);
    ObjectNode root = tree instanceof ObjectNode o ? o : JsonNodeFactory.instance.objectNode();
    ObjectNode breaker = root.get("breaker") instanceof ObjectNode b ? b : root;
    try {
      breaker.put(field, Long.parseLong(value));
    } catch (NumberFormatException notWhole) {
      try {
        breaker.put(field, Double.parseDouble(value));
      } catch (NumberFormatException notNumber) {
        breaker.put(field, value); // 20%, 30s
      }
    }
    return YAML.writeValueAsString(root);
  }

  static Duration duration(String option, String s) {
    String v = s.strip().toLowerCase(Locale.ROOT);
    try {
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      }
      if (v.endsWith("s")) {
        return Duration.ofMillis(
            Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
      }
      if (v.endsWith("m")) {
        return Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)) * 60);
      }
      return Duration.ofMillis(Math.round(Double.parseDouble(v) * 1000));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " : " + s + " (expected: 5s, 500ms, 2m)", e);
    }
  }

  static @Nullable Instant instant(String option, @Nullable String s) {
    if (s == null) {
      return null;
    }
    try {
      return Instant.parse(s.strip());
    } catch (DateTimeParseException e) {
      try {
        double v = Double.parseDouble(s.strip());
        return Instant.ofEpochSecond(0, Math.round(v * 1e9));
      } catch (NumberFormatException e2) {
        throw new IllegalArgumentException(
            option + " : " + s + " (expected: an ISO-8601 instant or epoch seconds)", e2);
      }
    }
  }

  static double rate(String option, String s) {
    String v = s.strip();
    try {
      return v.endsWith("%")
          ? Double.parseDouble(v.substring(0, v.length() - 1)) / 100
          : Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " : " + s + " (expected: 20% or 0.2)", e);
    }
  }
}
