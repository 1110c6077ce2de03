package dev.parapet.proxy.cli;

import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.admin.Reloader;
import dev.parapet.proxy.config.LoadedConfig;
import dev.parapet.proxy.config.TlsConfig;
import dev.parapet.proxy.net.Transport;
import dev.parapet.proxy.runtime.ProxyRuntime;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;

/**
 * {@code parapet run -c FILE}: validates the configuration (refusing it with every error, like
 * {@code validate}), starts the listener and the admin API, and runs until SIGINT or SIGTERM, which
 * drain it before it closes. SIGHUP reloads the configuration file.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description =
        "Runs the proxy with a configuration file until SIGINT/SIGTERM (which drain it);"
            + " SIGHUP reloads the file.")
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

  @Option(
      names = "--drain-timeout",
      paramLabel = "SECONDS",
      description =
          "On SIGTERM/SIGINT: how long to wait for requests in flight after the listener stops"
              + " accepting, before closing (default: the configuration's drain_timeout, 10 s).")
  @Nullable Integer drainSeconds;

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
    Duration drain =
        drainSeconds == null
            ? loaded.config().drainTimeout()
            : Duration.ofSeconds(Math.max(0, drainSeconds));
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicBoolean stopping = new AtomicBoolean();
    Runnable stop =
        () -> {
          if (stopping.compareAndSet(false, true)) {
            stopGracefully(runtime, drain, err);
          }
          stopped.countDown();
        };
    // SIGTERM and SIGINT are handled here, so the process exits 0 once the drain and the close
    // ran; the shutdown hook covers every other way the JVM ends (and SIGTERM under -Xrs).
    Runtime.getRuntime().addShutdownHook(new Thread(stop, "parapet-shutdown"));
    stopOn("TERM", stop);
    stopOn("INT", stop);
    reloadOnHangup(runtime);
    TlsConfig tls = loaded.config().tls();
    out.println(
        "parapet "
            + loaded.config().name()
            + " listening on http://"
            + loaded.config().listen()
            + (tls == null ? "" : " and https://" + tls.listen())
            + " (admin http://"
            + loaded.config().admin().listen()
            + ", transport "
            + chosen.name()
            + ")");
    out.flush();
    stopped.await();
    return 0;
  }

  /**
   * SIGTERM or SIGINT: {@code /readyz} answers 503 ("draining"), the listener stops accepting,
   * HTTP/2 connections get GOAWAY and HTTP/1.1 responses {@code Connection: close}, requests in
   * flight get up to the drain timeout to finish, then everything closes.
   */
  private static void stopGracefully(ProxyRuntime runtime, Duration drain, PrintWriter err) {
    runtime.admin().ready(false);
    try {
      long left = runtime.proxy().drain(drain);
      if (left > 0) {
        err.println(
            "parapet: closing with "
                + left
                + " requests in flight after a drain of "
                + drain.toMillis()
                + " ms");
        err.flush();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    runtime.close();
  }

  /**
   * Runs {@code stop} on a thread of its own when {@code signal} arrives; where the JVM does not
   * let a program handle it (run with {@code -Xrs}), the shutdown hook does the same work.
   */
  private static void stopOn(String signal, Runnable stop) {
    try {
      Signal.handle(new Signal(signal), s -> new Thread(stop, "parapet-stop").start());
    } catch (IllegalArgumentException e) {
      LoggerFactory.getLogger("parapet")
          .warn(
              "SIG{} cannot be handled here ({}): the shutdown hook drains",
              signal,
              e.getMessage());
    }
  }

  /**
   * SIGHUP re-reads the configuration file, as {@code POST /admin/reload} does (what a systemd
   * unit's {@code ExecReload=kill -HUP $MAINPID} asks for). Without a handler the JVM would treat
   * SIGHUP as a request to exit. Where the JVM does not let a program handle SIGHUP (run with
   * {@code -Xrs}), it keeps its default.
   */
  private static void reloadOnHangup(ProxyRuntime runtime) {
    Reloader reloader = runtime.admin().reloader();
    if (reloader == null) {
      return;
    }
    Logger log = LoggerFactory.getLogger("parapet.admin");
    try {
      Signal.handle(
          new Signal("HUP"),
          signal -> {
            Reloader.Result r = reloader.reload();
            if (r.status() == 200) {
              log.info("reload (SIGHUP): {}", r.summary());
            } else {
              log.warn("reload (SIGHUP): {}", r.summary());
              r.errors().forEach(e -> log.warn("reload (SIGHUP): {}", e));
            }
          });
    } catch (IllegalArgumentException e) {
      log.warn("SIGHUP cannot be handled here ({}): it keeps the JVM's default", e.getMessage());
    }
  }
}
