package dev.parapet.sim;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code parapet sim}: list, run, sweep and replay. Standard output carries only deterministic
 * results (the same seed prints the same bytes); timing goes to standard error.
 */
@Command(
    name = "sim",
    mixinStandardHelpOptions = true,
    description = "Deterministic fleet simulator running the real parapet-core policies.",
    subcommands = {
      SimCli.ListCommand.class,
      SimCli.RunCommand.class,
      SweepCommand.class,
      ReplayCommand.class
    })
public final class SimCli implements Callable<Integer> {
  @Spec CommandLine.Model.@Nullable CommandSpec spec;

  @Override
  public Integer call() {
    if (spec != null) {
      spec.commandLine().usage(spec.commandLine().getOut());
    }
    return 2;
  }

  /** Runs the CLI with {@code args}; returns the exit code. */
  public static int execute(String[] args, PrintWriter out, PrintWriter err) {
    CommandLine cl = new CommandLine(new SimCli());
    cl.setOut(out);
    cl.setErr(err);
    int code = cl.execute(args);
    out.flush();
    err.flush();
    return code;
  }

  public static void main(String[] args) {
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
    System.exit(execute(args, out, err));
  }

  @Command(name = "list", description = "Lists the built-in scenarios.")
  static final class ListCommand implements Callable<Integer> {
    @Spec CommandLine.Model.@Nullable CommandSpec spec;

    @Override
    public Integer call() {
      PrintWriter out = out(spec);
      for (Scenario s : Scenarios.builtIn().values()) {
        out.printf(Locale.ROOT, "%-22s %s%n", s.name(), s.description());
      }
      out.printf(Locale.ROOT, "%-22s %s%n", FleetCeiling.NAME, FleetCeiling.DESCRIPTION);
      return 0;
    }
  }

  @Command(
      name = "run",
      description = "Runs a built-in scenario or a scenario YAML file, every variant side by side.")
  static final class RunCommand implements Callable<Integer> {
    @Spec CommandLine.Model.@Nullable CommandSpec spec;

    @Parameters(index = "0", description = "built-in scenario name or path to a scenario YAML")
    String scenario = "";

    @Option(names = "--seed", description = "random seed (default ${DEFAULT-VALUE})")
    long seed = 1;

    @Option(names = "--csv", description = "directory for per-second CSV time series")
    @Nullable Path csv;

    @Option(
        names = "--html",
        description =
            "HTML report with SVG charts (default with --csv: DIR/SCENARIO.html beside the CSV)")
    @Nullable Path html;

    @Option(
        names = "--chart",
        description = "one standalone SVG chart: requests to the origin under test, per variant")
    @Nullable Path chart;

    @Option(
        names = "--scale",
        description = "multiply per-server rate, workers and origin capacity (default 1)")
    double scale = 1.0;

    @Option(names = "--pops", description = "override the number of PoPs")
    int pops;

    @Override
    public Integer call() throws IOException {
      PrintWriter out = out(spec);
      PrintWriter err = err(spec);
      if (scenario.equals(FleetCeiling.NAME)) {
        return fleetCeiling(out, err);
      }
      Scenario sc = Scenarios.builtIn().get(scenario);
      if (sc == null) {
        Path file = Path.of(scenario);
        if (!Files.isRegularFile(file)) {
          err.println(
              "scenario : "
                  + scenario
                  + " (expected: one of "
                  + Scenarios.builtIn().keySet()
                  + ", "
                  + FleetCeiling.NAME
                  + " or a YAML file)");
          return 2;
        }
        try {
          sc = ScenarioFile.load(file);
        } catch (ConfigException e) {
          err.println(e.getMessage());
          return 2;
        }
      }
      try {
        if (scale != 1.0) {
          sc = sc.scaled(scale);
        }
        if (pops > 0) {
          sc = sc.withPops(pops);
        }
      } catch (IllegalArgumentException e) {
        err.println(e.getMessage());
        return 2;
      }
      ThreadMXBean mx = ManagementFactory.getThreadMXBean();
      long cpu0 = mx.getCurrentThreadCpuTime();
      long wall0 = System.nanoTime();
      List<RunResult> runs = Scenarios.runAll(sc, seed);
      long cpu = mx.getCurrentThreadCpuTime() - cpu0;
      long wall = System.nanoTime() - wall0;
      out.print(Report.summary(runs));
      Path htmlFile = html;
      if (csv != null) {
        Path dir = csv;
        Files.createDirectories(dir);
        for (RunResult r : runs) {
          Path f = dir.resolve(Report.csvFileName(r));
          Files.writeString(f, Report.csv(r));
          out.println("wrote " + f);
        }
        if (htmlFile == null) {
          htmlFile = dir.resolve(Report.htmlFileName(sc));
        }
      }
      if (htmlFile != null) {
        write(htmlFile, HtmlReport.scenario(runs));
        out.println("wrote " + htmlFile);
      }
      Path chartFile = chart;
      if (chartFile != null) {
        write(chartFile, HtmlReport.charts(runs).get(0).render());
        out.println("wrote " + chartFile);
      }
      out.flush();
      long offered = 0;
      long events = 0;
      for (RunResult r : runs) {
        offered += r.total(Series.Col.OFFERED);
        events += r.events();
      }
      err.printf(
          Locale.ROOT,
          "simulated %d requests (%d events, %d variants x %.0f s) in %.2f s CPU, %.2f s wall%n",
          offered,
          events,
          runs.size(),
          sc.durationSeconds(),
          cpu / 1e9,
          wall / 1e9);
      return 0;
    }

    /** The fleet ceiling scenario: its own engine over the core's fleet limiter. */
    private Integer fleetCeiling(PrintWriter out, PrintWriter err) throws IOException {
      ThreadMXBean mx = ManagementFactory.getThreadMXBean();
      long cpu0 = mx.getCurrentThreadCpuTime();
      FleetCeiling.Result r = FleetCeiling.run(seed, pops > 0 ? pops : 300);
      out.print(r.summary());
      if (csv != null) {
        Path f = csv.resolve(FleetCeiling.NAME + ".csv");
        write(f, r.csv());
        out.println("wrote " + f);
      }
      out.flush();
      err.printf(
          Locale.ROOT,
          "simulated %d PoPs x %d s in %.2f s CPU%n",
          r.pops(),
          r.seconds().size(),
          (mx.getCurrentThreadCpuTime() - cpu0) / 1e9);
      return 0;
    }
  }

  static void write(Path file, String text) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(file, text);
  }

  static PrintWriter out(CommandLine.Model.@Nullable CommandSpec spec) {
    return spec == null
        ? new PrintWriter(System.out, true, StandardCharsets.UTF_8)
        : spec.commandLine().getOut();
  }

  static PrintWriter err(CommandLine.Model.@Nullable CommandSpec spec) {
    return spec == null
        ? new PrintWriter(System.err, true, StandardCharsets.UTF_8)
        : spec.commandLine().getErr();
  }
}
