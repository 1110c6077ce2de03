package dev.parapet.sim;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code parapet sim sweep}: one variant over several values of one parameter and seeds. */
@Command(
    name = "sweep",
    description =
        "Runs one variant of a scenario over several values of one protection parameter, with"
            + " several seeds each; prints mean, spread and range.")
final class SweepCommand implements Callable<Integer> {
  @Spec CommandLine.Model.@Nullable CommandSpec spec;

  @Parameters(index = "0", description = "built-in scenario name or path to a scenario YAML")
  String scenario = "";

  @Option(
      names = "--param",
      required = true,
      description = "failure_threshold, budget_ratio or open_duration (seconds)")
  String param = "";

  @Option(
      names = "--values",
      split = ",",
      description = "values to try (default: five around the core's default)")
  double @Nullable [] values;

  @Option(names = "--seeds", description = "seeds 1..N per value (default ${DEFAULT-VALUE})")
  int seeds = 5;

  @Option(names = "--variant", description = "variant to sweep (default: the scenario's last)")
  @Nullable String variant;

  @Option(names = "--scale", description = "multiply per-server rate, workers and origin capacity")
  double scale = 1.0;

  @Option(names = "--html", description = "HTML page with the table and a chart per metric")
  @Nullable Path html;

  @Override
  public Integer call() throws IOException {
    PrintWriter out =
        spec == null
            ? new PrintWriter(System.out, true, StandardCharsets.UTF_8)
            : spec.commandLine().getOut();
    PrintWriter err =
        spec == null
            ? new PrintWriter(System.err, true, StandardCharsets.UTF_8)
            : spec.commandLine().getErr();
    Scenario sc = Scenarios.builtIn().get(scenario);
    try {
      if (sc == null) {
        Path file = Path.of(scenario);
        if (!Files.isRegularFile(file)) {
          err.println(
              "scenario : "
                  + scenario
                  + " (expected: one of "
                  + Scenarios.builtIn().keySet()
                  + " or a YAML file)");
          return 2;
        }
        sc = ScenarioFile.load(file);
      }
      if (scale != 1.0) {
        sc = sc.scaled(scale);
      }
      Sweep.Param p = Sweep.Param.parse(param);
      double[] v = values == null ? p.defaults : values;
      long wall0 = System.nanoTime();
      Sweep.Result r = Sweep.run(sc, Sweep.variant(sc, variant), p, v, seeds);
      out.print(Sweep.report(r));
      Path htmlFile = html;
      if (htmlFile != null) {
        Path parent = htmlFile.toAbsolutePath().getParent();
        if (parent != null) {
          Files.createDirectories(parent);
        }
        Files.writeString(htmlFile, Sweep.html(r));
        out.println("wrote " + htmlFile);
      }
      out.flush();
      err.printf(
          Locale.ROOT,
          "%d runs in %.2f s wall%n",
          v.length * seeds,
          (System.nanoTime() - wall0) / 1e9);
      return 0;
    } catch (ConfigException | IllegalArgumentException e) {
      err.println(e.getMessage());
      return 2;
    }
  }
}
