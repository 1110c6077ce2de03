package dev.parapet.proxy.demo;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.parapet.proxy.config.HumanDuration;
import java.io.Console;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code parapet demo}: see a cascade prevented in the first minute. Starts everything in this JVM
 * ({@link DemoTopology}), plays the {@link Timeline} twice ({@link Demo}) and prints the summary.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Plays an origin's outage (healthy -> brownout -> down -> recovery) through a real edge and"
          + " shield tier on loopback, twice: breakers in shadow mode (unprotected), then"
          + " enforcing; ends with a side-by-side summary. A live dashboard runs meanwhile.",
      "See docs/demo.md."
    },
    sortOptions = false)
public final class DemoCommand implements Callable<Integer> {

  @CommandLine.Spec CommandLine.Model.@Nullable CommandSpec spec;

  @Option(
      names = "--duration",
      paramLabel = "TIME",
      description =
          "Both runs together, e.g. 80s or 2m; each run gets half (default: ${DEFAULT-VALUE}).")
  String duration = "80s";

  @Option(
      names = "--rate",
      paramLabel = "N",
      description = "Requests per second against the edge, open loop (default: ${DEFAULT-VALUE}).")
  double rate = 200;

  @Option(
      names = "--no-browser",
      description =
          "Do not open the dashboard in a browser (without DISPLAY none is opened anyway; the URL"
              + " is always printed).")
  boolean noBrowser;

  @Option(
      names = "--keep-running",
      description = "After the summary keep the origins, tiers and dashboard up until Ctrl-C.")
  boolean keepRunning;

  @Option(
      names = "--seed",
      description = "Seed of the origins' random draws (default: ${DEFAULT-VALUE}).")
  long seed = 1;

  @Option(
      names = "--api-down",
      paramLabel = "HOW",
      description =
          "How the API origin is down in the timeline's down phases: hang-refuse (first hanging,"
              + " then refusing connections) or 503 (every request answered 503 at once)"
              + " (default: ${DEFAULT-VALUE}).")
  String apiDown = Timeline.Down.HANG_REFUSE.option;

  @Option(
      names = "--versus-nginx",
      description =
          "Also play the timeline through the same chain built from nginx (30 s timeouts and"
              + " retries at every tier, seed 001's anti-pattern) and add it to the summary."
              + " Needs nginx installed.")
  private boolean versusNginx;

  @Option(names = "--verbose", description = "Also print the proxies' logs (breaker transitions).")
  boolean verbose;

  private Demo.@Nullable Report report;

  @Override
  public Integer call() throws InterruptedException {
    CommandLine cl = commandLine();
    PrintWriter out = cl.getOut();
    Demo.Options options = options();
    if (!verbose) {
      quietLogs();
    }
    if (versusNginx) {
      Path nginx = NginxChain.find();
      if (nginx == null) {
        cl.getErr()
            .println(
                "parapet demo: --versus-nginx needs nginx (/usr/sbin/nginx or on PATH);"
                    + " install it (Debian: apt-get install nginx) or leave the option out");
        cl.getErr().flush();
        return 2;
      }
      options = options.withNginx(nginx);
    }
    Demo demo = new Demo(options, out, isTerminal());
    DemoTopology topology;
    try {
      topology = DemoTopology.start(seed);
    } catch (IOException | RuntimeException e) {
      cl.getErr().println("parapet demo: cannot start: " + e.getMessage());
      cl.getErr().flush();
      return 1;
    }
    try {
      report = demo.run(topology);
      if (keepRunning) {
        out.println();
        out.println(
            "still running (Ctrl-C to stop): dashboard "
                + topology.dashboardUrl()
                + ", edge http://"
                + topology.edgeAddress().getHostString()
                + ":"
                + topology.edgeAddress().getPort()
                + "/api/...");
        out.flush();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
            .addShutdownHook(
                new Thread(
                    () -> {
                      topology.close();
                      stopped.countDown();
                    },
                    "parapet-demo-shutdown"));
        stopped.await();
      }
    } finally {
      if (!keepRunning) {
        topology.close();
      }
    }
    return 0;
  }

  /**
   * The run the options ask for (without nginx: {@code --versus-nginx} looks for it later).
   *
   * @throws CommandLine.ParameterException for an invalid option (exit code 2)
   */
  Demo.Options options() {
    CommandLine cl = commandLine();
    Duration total;
    try {
      total = HumanDuration.parse(duration);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(
          cl, "--duration: expected a duration such as 80s or 2m, found '" + duration + "'", e);
    }
    if (total.compareTo(Duration.ofSeconds(4)) < 0) {
      throw new CommandLine.ParameterException(
          cl, "--duration: expected at least 4s, found " + duration);
    }
    if (!(rate >= 1 && rate <= 5000)) {
      throw new CommandLine.ParameterException(
          cl, "--rate: expected requests per second in [1, 5000], found " + rate);
    }
    Timeline.Down down = Timeline.Down.ofOption(apiDown);
    if (down == null) {
      throw new CommandLine.ParameterException(
          cl, "--api-down: expected hang-refuse or 503, found '" + apiDown + "'");
    }
    boolean browser = !noBrowser && Demo.display() != null;
    return new Demo.Options(total, rate, browser, seed, Timeline.of(down), null);
  }

  /** Both runs, once {@link #call} returned (for tests). */
  Demo.@Nullable Report report() {
    return report;
  }

  /**
   * Breaker transitions are JSON log lines at INFO: the progress line and the dashboard show them.
   */
  private static void quietLogs() {
    for (String name : new String[] {"parapet", "dev.parapet"}) {
      if (LoggerFactory.getLogger(name) instanceof Logger l) {
        l.setLevel(Level.WARN);
      }
    }
  }

  /**
   * Whether standard output is a terminal: then the progress line redraws itself with {@code \r}.
   * From JDK 22 {@link System#console()} exists even when redirected and {@code isTerminal()}
   * tells; on 21 a console exists only for a terminal.
   */
  static boolean isTerminal() {
    Console c = System.console();
    if (c == null) {
      return false;
    }
    try {
      Method m = Console.class.getMethod("isTerminal");
      return Boolean.TRUE.equals(m.invoke(c));
    } catch (ReflectiveOperationException e) {
      return true;
    }
  }

  private CommandLine commandLine() {
    CommandLine.Model.CommandSpec s = spec;
    if (s == null) {
      throw new IllegalStateException("spec : null (expected: injected by picocli)");
    }
    return s.commandLine();
  }
}
