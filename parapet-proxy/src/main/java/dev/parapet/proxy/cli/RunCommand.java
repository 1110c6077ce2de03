package dev.parapet.proxy.cli;

import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.LoadedConfig;
import dev.parapet.proxy.net.Transport;
import dev.parapet.proxy.runtime.ProxyRuntime;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code parapet run -c FILE}: validates the configuration (refusing it with every error, like
 * {@code validate}), starts the listener and the admin API, and runs until SIGINT or SIGTERM.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = "Runs the proxy with a configuration file until SIGINT/SIGTERM.")
public final class RunCommand implements Callable<Integer> {

  @Option(
      names = {"-c", "--config"},
      required = true,
      paramLabel = "FILE",
      description = "The YAML configuration file.")
  @Nullable Path config;

  @Option(
      names = "--threads",
      paramLabel = "N",
      description = "Event loop threads (default: 0 = twice the CPUs).")
  int threads;

  @Option(
      names = "--transport",
      paramLabel = "NAME",
      defaultValue = "${sys:parapet.transport:-auto}",
      description =
          "Socket transport: auto (the first available of epoll, io_uring, nio), epoll, io_uring"
              + " or nio (default: ${DEFAULT-VALUE}).")
  String transport = "auto";

  @CommandLine.Spec CommandLine.Model.@Nullable CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    CommandLine.Model.CommandSpec s = spec;
    Path file = config;
    if (s == null || file == null) {
      throw new IllegalStateException("run : not initialised by picocli (expected: -c FILE)");
    }
    PrintWriter out = s.commandLine().getOut();
    PrintWriter err = s.commandLine().getErr();
    Transport chosen;
    try {
      chosen = Transport.named(transport);
    } catch (IllegalArgumentException e) {
      err.println("--transport: " + e.getMessage());
      err.flush();
      return ValidateCommand.INVALID;
    }
    ValidateCommand.Checked checked = ValidateCommand.check(file, err);
    LoadedConfig loaded = checked.loaded();
    if (loaded == null) {
      err.println(file + ": not started");
      err.flush();
      return checked.exitCode();
    }
    ProxyRuntime runtime;
    try {
      runtime =
          ProxyRuntime.start(
              loaded.config(), file, Ticker.system(), RandomSource.threadLocal(), threads, chosen);
    } catch (IOException | IllegalArgumentException e) {
      err.println(file + ": cannot start: " + e.getMessage());
      err.flush();
      return ValidateCommand.INVALID;
    }
    // What start-up built and keeps for the life of the process (classes' data, configuration,
    // metrics, pools: several MiB) goes to the old generation now, in one collection. Otherwise
    // each young collection under load copies it again, up to fifteen times before it ages out:
    // measured, that copying made the first minute's young pauses 9-12 ms instead of 3-6 ms
    // (1-2 ms once the first connections' objects age out too), and those pauses were the
    // proxy's p99.5 and above at saturation (docs/benchmarks.md).
    System.gc();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  runtime.close();
                  stopped.countDown();
                },
                "parapet-shutdown"));
    out.println(
        "parapet "
            + loaded.config().name()
            + " listening on http://"
            + loaded.config().listen()
            + " (admin http://"
            + loaded.config().admin().listen()
            + ", transport "
            + chosen.name()
            + ")");
    out.flush();
    stopped.await();
    return 0;
  }
}
