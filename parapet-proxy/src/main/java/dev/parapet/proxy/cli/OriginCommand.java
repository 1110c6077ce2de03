package dev.parapet.proxy.cli;

import dev.parapet.proxy.faultorigin.Behaviour;
import dev.parapet.proxy.faultorigin.FaultOrigin;
import dev.parapet.proxy.faultorigin.FaultOriginSettings;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.faultorigin.FaultPlanJson;
import dev.parapet.proxy.faultorigin.Health;
import dev.parapet.proxy.faultorigin.Latency;
import dev.parapet.proxy.faultorigin.PlanException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code parapet origin}: runs a {@link FaultOrigin} until SIGINT or SIGTERM. The flags are the
 * starting {@link FaultPlan}; the control endpoint changes it while it runs. An invalid flag is
 * reported as "what, expected, found" with exit code 2.
 */
@Command(
    name = "origin",
    mixinStandardHelpOptions = true,
    description = {
      "Runs an HTTP/1.1 origin that fails on purpose: latency, errors, resets, hangs, refusals,"
          + " garbage; changed at run time over a control endpoint on 127.0.0.1.",
      "Rates add up to at most 100%%. See docs/fault-origin.md."
    },
    sortOptions = false)
public final class OriginCommand implements Callable<Integer> {
  private static final Pattern FIELD = Pattern.compile("[a-z][a-z_]*");

  @CommandLine.Spec CommandLine.Model.@Nullable CommandSpec spec;

  @Option(
      names = "--port",
      description = "Origin port; 0 picks a free one (default: ${DEFAULT-VALUE}).")
  int port = 9001;

  @Option(
      names = "--control-port",
      description =
          "Control endpoint port on 127.0.0.1; 0 picks a free one (default: port + 1000, or 0 when --port is 0).")
  @Nullable Integer controlPort;

  @Option(names = "--bind", description = "Origin bind address (default: ${DEFAULT-VALUE}).")
  String bind = "127.0.0.1";

  @Option(
      names = "--status",
      description = "Status of a normal answer (default: ${DEFAULT-VALUE}).")
  int status = Behaviour.DEFAULT.status();

  @Option(
      names = "--body-size",
      description = "Body bytes of a normal answer (default: ${DEFAULT-VALUE}).")
  int bodySize = Behaviour.DEFAULT.bodySize();

  @Option(names = "--cache-control", description = "Cache-Control header of a normal answer.")
  @Nullable String cacheControl;

  @Option(
      names = "--etag",
      description = "ETag of a normal answer, quoted (\"v1\"); If-None-Match gets 304.")
  @Nullable String etag;

  @Option(
      names = "--latency",
      description =
          "Delay before answering: none | fixed:50ms | uniform:10ms-200ms | lognormal:P50,P99"
              + " (lognormal:120ms,4s) | bimodal:FAST%%:FAST,SLOW (bimodal:90%%:20ms,2s)"
              + " (default: ${DEFAULT-VALUE}).")
  String latency = "none";

  @Option(
      names = "--error-rate",
      description = "Share of requests answered with --error-status (default: ${DEFAULT-VALUE}).")
  String errorRate = "0%";

  @Option(
      names = "--error-status",
      description = "Status of an injected error (default: ${DEFAULT-VALUE}).")
  int errorStatus = Behaviour.DEFAULT.errorStatus();

  @Option(
      names = "--reset-rate",
      description = "Share of requests answered with a TCP reset (default: ${DEFAULT-VALUE}).")
  String resetRate = "0%";

  @Option(
      names = "--mid-body-reset-rate",
      description = "Share of answers reset after half the body (default: ${DEFAULT-VALUE}).")
  String midBodyResetRate = "0%";

  @Option(
      names = "--hang-rate",
      description = "Share of requests never answered (default: ${DEFAULT-VALUE}).")
  String hangRate = "0%";

  @Option(
      names = "--garbage-rate",
      description =
          "Share of requests answered with a malformed response (default: ${DEFAULT-VALUE}).")
  String garbageRate = "0%";

  @Option(
      names = "--refuse",
      description = "Start refusing connections (closed listener) until the plan says otherwise.")
  boolean refuse;

  @Option(
      names = "--health",
      description =
          "GET /healthz: follow (the plan's faults), up or down (default: ${DEFAULT-VALUE}).")
  String health = "follow";

  @Option(
      names = "--seed",
      description = "Seed for outcomes and latency samples (repeatable runs).")
  @Nullable Long seed;

  @Option(
      names = "--threads",
      description = "Event-loop threads; 0 = Netty's default (default: ${DEFAULT-VALUE}).")
  int threads;

  @Option(
      names = "--workers",
      description =
          "Requests worked on at once across all connections, the rest wait in order; 0 = no"
              + " limit (default: ${DEFAULT-VALUE}).")
  int workers;

  /** The starting plan these flags describe; throws a ParameterException naming the flag. */
  public FaultPlan plan() {
    try {
      Behaviour.Builder b =
          Behaviour.builder()
              .status(status)
              .bodySize(bodySize)
              .cacheControl(cacheControl)
              .etag(etag)
              .latency(Latency.parse("--latency", latency))
              .errorRate(rate("--error-rate", errorRate))
              .errorStatus(errorStatus)
              .resetRate(rate("--reset-rate", resetRate))
              .midBodyResetRate(rate("--mid-body-reset-rate", midBodyResetRate))
              .hangRate(rate("--hang-rate", hangRate))
              .garbageRate(rate("--garbage-rate", garbageRate));
      Behaviour behaviour;
      try {
        behaviour = b.build();
      } catch (PlanException e) {
        throw new PlanException(asFlags(e.field()), e.expected(), e.found());
      }
      return FaultPlan.of(behaviour).withRefuse(refuse).withHealth(health());
    } catch (PlanException e) {
      throw new CommandLine.ParameterException(commandLine(), e.getMessage(), e);
    }
  }

  /** Where the origin listens, and its seed; throws a ParameterException naming the flag. */
  public FaultOriginSettings settings() {
    InetAddress address;
    try {
      address = InetAddress.getByName(bind);
    } catch (UnknownHostException e) {
      throw new CommandLine.ParameterException(
          commandLine(), "--bind: expected an IP address or host name, found '" + bind + "'", e);
    }
    requirePort("--port", port);
    int control;
    if (controlPort != null) {
      control = controlPort;
      requirePort("--control-port", control);
    } else if (port == 0) {
      control = 0;
    } else if (port + 1000 > 65535) {
      throw new CommandLine.ParameterException(
          commandLine(),
          "--control-port: expected a port in [0, 65535] (defaults to --port + 1000), found "
              + (port + 1000));
    } else {
      control = port + 1000;
    }
    if (threads < 0) {
      throw new CommandLine.ParameterException(
          commandLine(), "--threads: expected a count >= 0, found " + threads);
    }
    if (workers < 0) {
      throw new CommandLine.ParameterException(
          commandLine(), "--workers: expected a count >= 0, found " + workers);
    }
    return new FaultOriginSettings(address, port, control, seed, threads, workers);
  }

  @Override
  public Integer call() throws InterruptedException {
    FaultPlan plan = plan();
    FaultOriginSettings settings = settings();
    CommandLine cl = commandLine();
    PrintWriter out = cl.getOut();
    FaultOrigin origin;
    try {
      origin = FaultOrigin.start(settings, plan);
    } catch (UncheckedIOException e) {
      cl.getErr().println("parapet origin: " + e.getMessage());
      cl.getErr().flush();
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  origin.close();
                  stopped.countDown();
                },
                "parapet-origin-shutdown"));
    out.printf(
        "fault origin listening on %s:%d (%s)%n",
        settings.bind().getHostAddress(), origin.port(), origin.transport());
    origin
        .controlPort()
        .ifPresent(
            p -> out.printf("control endpoint on 127.0.0.1:%d (GET/PUT /plan, GET /stats)%n", p));
    if (seed != null) {
      out.printf("seed %d%n", seed);
    }
    out.print("plan: " + FaultPlanJson.write(plan));
    out.flush();
    stopped.await();
    return 0;
  }

  private Health health() {
    return Health.parse("--health", health);
  }

  private static double rate(String flag, String text) {
    return Behaviour.parseRate(flag, text);
  }

  /** {@code error_rate + hang_rate} becomes {@code --error-rate + --hang-rate}. */
  private static String asFlags(String field) {
    Matcher m = FIELD.matcher(field);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(sb, Matcher.quoteReplacement("--" + m.group().replace('_', '-')));
    }
    m.appendTail(sb);
    return sb.toString();
  }

  private void requirePort(String flag, int value) {
    if (value < 0 || value > 65535) {
      throw new CommandLine.ParameterException(
          commandLine(), flag + ": expected a port in [0, 65535], found " + value);
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
