package dev.parapet.proxy.demo;

import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.State;
import dev.parapet.proxy.faultorigin.FaultPlan;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Plays the demo: starts the {@link DemoTopology}, warms it up, then runs the {@link Timeline}
 * twice against the edge at a constant rate — breakers in shadow mode (they decide, log and count,
 * but reject nothing: the unprotected baseline) and then enforcing — and prints both runs side by
 * side.
 *
 * <p>The demo thread is the conductor: every 100 ms it puts the API origin's plan for the current
 * phase in force, watches the API breakers (for time to open) and redraws the progress line. The
 * load itself runs on the generator's event loop and never waits for this thread.
 */
final class Demo {
  private static final long CLIENT_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
  private static final int MAX_CONNECTIONS = 4096;

  /**
   * How to run it.
   *
   * @param timeline what the API origin does during each run
   * @param nginx an nginx binary: also run the timeline through the same chain built from nginx
   *     (seed 001's 30 s timeouts and retries at every tier), or null
   */
  record Options(
      Duration duration,
      double rate,
      boolean openBrowser,
      long seed,
      Timeline timeline,
      @Nullable Path nginx) {
    Options withNginx(Path nginx) {
      return new Options(duration, rate, openBrowser, seed, timeline, nginx);
    }
  }

  /** Both runs (and the nginx one when asked for) and where the dashboard was. */
  record Report(
      RunResult shadow, RunResult enforced, @Nullable RunResult nginx, String dashboardUrl) {}

  private final Options options;
  private final PrintWriter out;
  private final boolean tty;
  private final Timeline timeline;

  Demo(Options options, PrintWriter out, boolean tty) {
    this.options = options;
    this.timeline = options.timeline();
    this.out = out;
    this.tty = tty;
  }

  /** Runs both passes on {@code topology} and prints the summary. */
  Report run(DemoTopology topology) throws InterruptedException {
    String url = topology.dashboardUrl();
    out.println("parapet demo: api and static origins, shield and edge tiers on 127.0.0.1");
    out.println("  dashboard   " + url + "   (shield: " + topology.shieldDashboardUrl() + ")");
    out.println(
        String.format(
            Locale.ROOT,
            "  load        %.0f req/s open loop against the edge (2/3 /api/, 1/3 /static/)",
            options.rate()));
    long runNanos = options.duration().toNanos() / 2;
    out.println(
        "  timeline    "
            + timeline.describe()
            + ", "
            + seconds(runNanos)
            + " per run, played twice: breakers in shadow mode, then enforcing");
    out.flush();
    if (options.openBrowser()) {
      openBrowser(url);
    }
    try (LoadGenerator load =
        new LoadGenerator(topology.edgeAddress(), MAX_CONNECTIONS, CLIENT_TIMEOUT_NANOS)) {
      long warmup = Math.min(TimeUnit.SECONDS.toNanos(2), options.duration().toNanos() / 10);
      progressLine("warming up for " + seconds(warmup) + " (not measured)", true);
      await(load.start(options.rate(), warmup));
      Path nginx = options.nginx();
      int passes = nginx == null ? 2 : 3;
      RunResult shadow = pass(topology, load, Mode.SHADOW, 1, passes, runNanos);
      RunResult enforced = pass(topology, load, Mode.ENFORCE, 2, passes, runNanos);
      RunResult versus = nginx == null ? null : nginxPass(topology, nginx, warmup, runNanos);
      List<RunResult> columns = new ArrayList<>();
      if (versus != null) {
        columns.add(versus);
      }
      columns.add(shadow);
      columns.add(enforced);
      printSummary(columns);
      return new Report(shadow, enforced, versus, url);
    }
  }

  /** The third run: the same origins, timeline and load through nginx's edge and shield. */
  private RunResult nginxPass(DemoTopology topology, Path nginx, long warmup, long runNanos)
      throws InterruptedException {
    try (NginxChain chain = NginxChain.start(nginx, topology.api.port(), topology.statics.port());
        LoadGenerator load =
            new LoadGenerator(chain.edgeAddress(), MAX_CONNECTIONS, CLIENT_TIMEOUT_NANOS)) {
      swap(topology, timeline.phases().get(0).plan());
      progressLine("warming up nginx for " + seconds(warmup) + " (not measured)", true);
      await(load.start(options.rate(), warmup));
      return pass(topology, load, null, 3, 3, runNanos);
    } catch (IOException e) {
      throw new IllegalStateException("demo : nginx chain: " + e.getMessage(), e);
    }
  }

  /** One run of the timeline; {@code mode} null means the load goes to the nginx chain. */
  private RunResult pass(
      DemoTopology topology,
      LoadGenerator load,
      @Nullable Mode mode,
      int number,
      int passes,
      long runNanos)
      throws InterruptedException {
    String label = mode == null ? "nginx" : mode == Mode.SHADOW ? "shadow" : "enforce";
    if (mode != null) {
      topology.resetBreakers(mode);
    }
    swap(topology, timeline.phases().get(0).plan());
    long attemptsBefore = topology.apiAttempts();
    long originBefore = topology.api.stats().trafficRequests();
    LoadGenerator.Run run = load.start(options.rate(), runNanos);
    List<Timeline.Phase> phases = timeline.phases();
    int played = -1;
    Double timeToOpen = null;
    long brownoutStart = timeline.phase(Timeline.BROWNOUT).startNanos(runNanos);
    long lastPlain = 0;
    while (!run.done().isDone()) {
      long start = run.startNanos();
      long sleepNanos = TimeUnit.MILLISECONDS.toNanos(100);
      if (start != 0) {
        long elapsed = System.nanoTime() - start;
        Timeline.Phase phase = timeline.at(elapsed, runNanos);
        int target = elapsed < runNanos ? phases.indexOf(phase) : played;
        boolean changed = target > played;
        // Every phase is played in order, even one this thread overslept: a skipped refusal
        // would be a different outage.
        while (played < target) {
          played++;
          swap(topology, phases.get(played).plan());
        }
        if (played + 1 < phases.size()) {
          long untilNext = phases.get(played + 1).startNanos(runNanos) - elapsed;
          sleepNanos = Math.max(1_000_000, Math.min(sleepNanos, untilNext));
        }
        if (mode != null
            && timeToOpen == null
            && elapsed >= brownoutStart
            && anyApiBreakerTripped(topology)) {
          timeToOpen = (elapsed - brownoutStart) / 1e6;
        }
        String phaseName = elapsed < runNanos ? phase.name() : "draining";
        String line =
            String.format(
                Locale.ROOT,
                "[%d/%d %s] %-14s %4.1f/%.0fs sent %,d ok %d%% fast-fail %,d in-flight %,d api: %s",
                number,
                passes,
                label,
                phaseName,
                Math.min(elapsed, runNanos) / 1e9,
                runNanos / 1e9,
                run.sent.get(),
                run.sent.get() == 0
                    ? 0
                    : Math.round(
                        100.0 * run.ok.get() / Math.max(1, run.ok.get() + run.failed.get())),
                run.fastFails.get(),
                run.inflight.get(),
                mode == null ? "no breakers" : apiBreakerStates(topology));
        boolean plainDue = changed || elapsed - lastPlain > TimeUnit.SECONDS.toNanos(5);
        if (tty || plainDue) {
          progressLine(line, plainDue);
          if (plainDue) {
            lastPlain = elapsed;
          }
        }
      }
      TimeUnit.NANOSECONDS.sleep(sleepNanos);
    }
    LoadGenerator.Recording recording = await(run);
    if (tty) {
      out.print("\r\033[K");
    }
    out.println(
        String.format(
            Locale.ROOT,
            "[%d/%d %s] done: %,d requests, %.1f %% succeeded",
            number,
            passes,
            label,
            recording.count(),
            100.0 * countOk(recording) / Math.max(1, recording.count())));
    out.flush();
    long attempts = mode == null ? -1 : topology.apiAttempts() - attemptsBefore;
    long reached = topology.api.stats().trafficRequests() - originBefore;
    String column =
        mode == null
            ? "nginx (30 s timeouts, retries)"
            : mode == Mode.SHADOW ? "shadow (unprotected)" : "enforced";
    return RunResult.of(column, mode, recording, timeline, runNanos, attempts, reached, timeToOpen);
  }

  private static long countOk(LoadGenerator.Recording r) {
    long ok = 0;
    for (int s : r.status()) {
      if (s >= 200 && s < 300) {
        ok++;
      }
    }
    return ok;
  }

  private static boolean anyApiBreakerTripped(DemoTopology topology) {
    for (CircuitBreaker b : topology.apiBreakers()) {
      State s = b.state();
      if (s == State.OPEN || s == State.HALF_OPEN || s == State.FORCED_OPEN) {
        return true;
      }
    }
    return false;
  }

  private static String apiBreakerStates(DemoTopology topology) {
    CircuitBreaker shield = topology.shieldApiBreaker();
    List<String> parts = new ArrayList<>();
    if (shield != null) {
      parts.add("shield " + shield.state());
    }
    for (CircuitBreaker b : topology.edge.proxy().breakers().all()) {
      if (b.key().toString().contains("/api/")) {
        parts.add("edge " + b.state());
      }
    }
    return String.join(" ", parts);
  }

  private static void swap(DemoTopology topology, FaultPlan plan) {
    try {
      topology.api.swapPlan(plan).get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("demo : api origin plan change failed: " + e, e);
    }
  }

  private static LoadGenerator.Recording await(LoadGenerator.Run run) throws InterruptedException {
    try {
      return run.done().get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("demo : load run failed: " + e.getCause(), e);
    }
  }

  private void progressLine(String line, boolean plain) {
    if (tty) {
      out.print("\r\033[K" + line);
    } else if (plain) {
      out.println(line);
    }
    out.flush();
  }

  private void printSummary(List<RunResult> runs) {
    List<String[]> rows = new ArrayList<>();
    String[] head = new String[runs.size() + 1];
    head[0] = "";
    for (int i = 0; i < runs.size(); i++) {
      head[i + 1] = runs.get(i).label();
    }
    rows.add(head);
    rows.add(row("origin attempts / offered (API)", Demo::attemptsText, runs));
    rows.add(
        row(
            "requests reaching the API origin",
            r ->
                String.format(
                    Locale.ROOT,
                    "%,d (%.0f %%)",
                    r.originRequests(),
                    r.offeredApi() == 0 ? 0.0 : 100.0 * r.originRequests() / r.offeredApi()),
            runs));
    rows.add(
        row(
            "user success rate (fresh + stale)",
            r ->
                String.format(Locale.ROOT, "%.1f %%", 100 * r.successRate())
                    + (r.stale() > 0 ? String.format(Locale.ROOT, " (%,d stale)", r.stale()) : ""),
            runs));
    rows.add(
        row(
            "healthy route (/static/) ok",
            r ->
                String.format(
                    Locale.ROOT,
                    "%.2f %% (%,d of %,d)",
                    100 * r.staticSuccessRate(),
                    r.staticSucceeded(),
                    r.statics()),
            runs));
    rows.add(
        row(
            "healthy route p99: healthy phase / all",
            r -> millis(r.staticHealthyP99Millis()) + " / " + millis(r.staticP99Millis()),
            runs));
    rows.add(
        row(
            "sick route (/api/) p50 / p99",
            r -> millis(r.apiP50Millis()) + " / " + millis(r.apiP99Millis()),
            runs));
    rows.add(
        row(
            "stale answers p99",
            r -> {
              Double p = r.staleP99Millis();
              return p == null ? "n/a (none)" : millis(p);
            },
            runs));
    rows.add(
        row(
            "time to open (from brownout start)",
            r -> {
              if (r.mode() == null) {
                return "n/a (no breakers)";
              }
              Double t = r.timeToOpenMillis();
              if (t == null) {
                return "did not open";
              }
              return seconds(t) + (r.mode() == Mode.SHADOW ? " (would open)" : "");
            },
            runs));
    rows.add(
        row(
            "fast-fail p99",
            r -> {
              Double p = r.fastFailP99Millis();
              return p == null
                  ? "n/a (none)"
                  : millis(p) + String.format(Locale.ROOT, " (%,d)", r.fastFails());
            },
            runs));
    rows.add(
        row(
            "caller time held by failures",
            r -> String.format(Locale.ROOT, "%,.0f s", r.failedHeldSeconds()),
            runs));
    rows.add(
        row(
            "recovery time (API >= 90 % ok)",
            r -> {
              Double t = r.recoveryMillis();
              return t == null ? "not within the run" : seconds(t);
            },
            runs));
    int columns = runs.size() + 1;
    int[] width = new int[columns];
    for (String[] r : rows) {
      for (int i = 0; i < columns; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    out.println();
    out.println("summary (same timeline, same load; latency from each request's due time)");
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder("  ");
      for (int i = 0; i < columns; i++) {
        line.append(i + 1 < columns ? pad(r[i], width[i]) + "   " : r[i]);
      }
      out.println(line);
    }
    out.flush();
  }

  private static String attemptsText(RunResult r) {
    if (r.apiAttempts() < 0) {
      return "n/a (shield is nginx)";
    }
    return String.format(
        Locale.ROOT,
        "%,d / %,d (%.0f %%)",
        r.apiAttempts(),
        r.offeredApi(),
        r.offeredApi() == 0 ? 0.0 : 100.0 * r.apiAttempts() / r.offeredApi());
  }

  private static String[] row(String name, Function<RunResult, String> f, List<RunResult> runs) {
    String[] r = new String[runs.size() + 1];
    r[0] = name;
    for (int i = 0; i < runs.size(); i++) {
      r[i + 1] = f.apply(runs.get(i));
    }
    return r;
  }

  private static String pad(String s, int width) {
    return s + " ".repeat(Math.max(0, width - s.length()));
  }

  private static String millis(double ms) {
    return ms < 10
        ? String.format(Locale.ROOT, "%.2f ms", ms)
        : String.format(Locale.ROOT, "%,.0f ms", ms);
  }

  private static String seconds(double millis) {
    return String.format(Locale.ROOT, "%.1f s", millis / 1000);
  }

  private static String seconds(long nanos) {
    return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
  }

  /** Opens the page in the desktop's browser; only called when there is a display. */
  private void openBrowser(String url) {
    for (String opener : new String[] {"xdg-open", "sensible-browser"}) {
      try {
        new ProcessBuilder(opener, url)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
        return;
      } catch (IOException e) {
        // Try the next one; the URL is printed anyway.
      }
    }
  }

  static @Nullable String display() {
    String d = System.getenv("DISPLAY");
    if (d == null || d.isBlank()) {
      d = System.getenv("WAYLAND_DISPLAY");
    }
    return d == null || d.isBlank() ? null : d;
  }
}
