package dev.parapet.sim;

import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.retry.RetryRefusal;
import dev.parapet.sim.Series.Col;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Renders runs as a terminal table and as CSV. Every number is formatted with {@link Locale#ROOT}
 * and a fixed precision, so the same runs give the same bytes on any machine.
 */
final class Report {
  private Report() {}

  /** The side-by-side summary of one scenario's variants. */
  static String summary(List<RunResult> runs) {
    Scenario sc = runs.get(0).scenario();
    StringBuilder out = new StringBuilder();
    out.append("scenario ")
        .append(sc.name())
        .append(" (seed ")
        .append(runs.get(0).seed())
        .append("): ")
        .append(sc.description())
        .append('\n');
    out.append(
        String.format(
            Locale.ROOT,
            "fleet: %d PoPs x %d servers x %d workers, %.0f rps offered, %.0f%% to the sick"
                + " origin%s%n",
            sc.pops(),
            sc.serversPerPop(),
            sc.workersPerServer(),
            sc.offeredRps(),
            sc.sickShare() * 100,
            ""));
    out.append(originLine(sc)).append('\n');
    if (sc.cache().hitRatio() > 0 || sc.cache().staleIfError() > 0) {
      out.append(
          String.format(
              Locale.ROOT,
              "edge cache: %.0f%% fresh hits, stale copy for %.0f%% of the misses that fail%n",
              sc.cache().hitRatio() * 100,
              sc.cache().staleIfError() * 100));
    }
    StringBuilder tl = new StringBuilder("timeline:");
    for (int i = 0; i < sc.timeline().size(); i++) {
      OriginPhase p = sc.timeline().get(i);
      tl.append(i == 0 ? " " : " -> ").append(p.name());
      tl.append(String.format(Locale.ROOT, " %.0fs", p.seconds()));
    }
    out.append(tl).append('\n');
    for (String line : Scenarios.extraLines(runs)) {
      out.append(line).append('\n');
    }
    out.append(table(summaryRows(runs)));
    return out.toString();
  }

  /** The origin's capacity: workers, queue, what it does with abandoned work, per-phase rates. */
  static String originLine(Scenario sc) {
    OriginCapacity c = sc.capacity();
    if (!c.limited()) {
      return "origin: unlimited workers (latency is the service time)";
    }
    StringBuilder line =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "origin: %d workers, queue %s, abandoned work %s; capacity",
                c.workers(),
                c.queue() == OriginCapacity.UNBOUNDED ? "unbounded" : Integer.toString(c.queue()),
                c.serveAbandoned() ? "served (overload collapse)" : "dropped"));
    for (int i = 0; i < sc.timeline().size(); i++) {
      if (!sc.timeline().get(i).down()) {
        line.append(
            String.format(
                Locale.ROOT, " %s %.0f/s", sc.timeline().get(i).name(), sc.capacityRps(i)));
      }
    }
    return line.toString();
  }

  /** The summary table: a header row (empty, then the variants' names) and one row per metric. */
  static List<String[]> summaryRows(List<RunResult> runs) {
    Scenario sc = runs.get(0).scenario();
    List<String[]> rows = new ArrayList<>();
    List<String> header = new ArrayList<>();
    header.add("");
    for (RunResult r : runs) {
      header.add(r.variant().name());
    }
    rows.add(header.toArray(String[]::new));
    row(rows, runs, "offered requests", r -> Long.toString(r.total(Col.OFFERED)));
    row(rows, runs, "origin attempts", r -> Long.toString(r.total(Col.ATTEMPTS)));
    row(rows, runs, "amplification (fault)", r -> fmt("%.3fx", r.faultAmplification()));
    for (int i = 0; i < sc.timeline().size(); i++) {
      int phase = i;
      row(
          rows,
          runs,
          "  attempts/request " + sc.timeline().get(i).name(),
          r -> fmt("%.3fx", r.phaseAmplification(phase)));
    }
    row(rows, runs, "attempts/s (fault)", r -> fmt("%.0f", r.faultAttemptsPerSecond()));
    for (int i = 0; i < sc.timeline().size(); i++) {
      int phase = i;
      row(
          rows,
          runs,
          "user success " + sc.timeline().get(i).name(),
          r -> pct(r.phaseUserSuccess(phase)));
    }
    for (int i = 0; i < sc.timeline().size(); i++) {
      int phase = i;
      row(
          rows,
          runs,
          "origin goodput/s " + sc.timeline().get(i).name(),
          r -> fmt("%.0f", r.phaseRate(Col.ORIGIN_OK, phase)));
    }
    for (int i = 0; i < sc.timeline().size(); i++) {
      int phase = i;
      row(rows, runs, "origin load " + sc.timeline().get(i).name(), r -> originLoad(r, phase));
    }
    if (sc.capacity().limited()) {
      row(
          rows,
          runs,
          "origin refused (queue full)",
          r -> Long.toString(r.total(Col.ORIGIN_REFUSED)));
      row(
          rows,
          runs,
          "origin dropped (client gone)",
          r -> Long.toString(r.total(Col.ORIGIN_DROPPED)));
    }
    row(rows, runs, "origin work wasted (fault)", r -> pct(r.faultWastedShare()));
    if (sc.cache().hitRatio() > 0 || sc.cache().staleIfError() > 0) {
      row(rows, runs, "cache hits", r -> Long.toString(r.total(Col.CACHE_HITS)));
      row(rows, runs, "stale served", r -> Long.toString(r.total(Col.STALE_SERVED)));
    }
    row(
        rows,
        runs,
        "Little's law L / lambda*W",
        r -> fmt("%.1f", r.littlesLaw()[0]) + " / " + fmt("%.1f", r.littlesLaw()[1]));
    row(rows, runs, "amplification (all)", r -> fmt("%.3fx", r.amplification()));
    row(rows, runs, "success rate", r -> pct(r.successRate()));
    row(rows, runs, "success rate (fault)", r -> pct(r.faultSuccessRate()));
    if (sc.sickShare() < 1.0) {
      row(rows, runs, "healthy-route success", r -> pct(r.healthyRouteSuccessRate()));
    }
    row(rows, runs, "p99 latency (baseline)", r -> latency(r.baselineLatencyMillis(0.99)));
    row(rows, runs, "p50 latency (fault)", r -> latency(r.faultLatencyMillis(0.50)));
    row(rows, runs, "p99 latency (fault)", r -> latency(r.faultLatencyMillis(0.99)));
    row(rows, runs, "no free worker", r -> Long.toString(r.total(Col.NO_WORKER)));
    row(
        rows,
        runs,
        "time to open",
        r -> r.timeToOpenSeconds() < 0 ? "-" : fmt("%.2fs", r.timeToOpenSeconds()));
    row(rows, runs, "breaker opens", r -> Long.toString(r.opens()));
    row(rows, runs, "fast-fail share", r -> pct(r.fastFailShare()));
    if (runs.stream().anyMatch(r -> r.variant().retry() == RetryMode.BUDGET)) {
      row(
          rows,
          runs,
          "retries refused: budget",
          r -> Long.toString(r.decisions().retriesRefused(RetryRefusal.BUDGET)));
    }
    if (runs.stream().anyMatch(r -> r.variant().hedge())) {
      row(rows, runs, "hedges sent", r -> Long.toString(r.total(Col.HEDGES)));
      row(rows, runs, "hedge wins", r -> Long.toString(r.total(Col.HEDGE_WINS)));
      row(
          rows,
          runs,
          "hedges refused: breaker",
          r -> Long.toString(r.decisions().hedges(HedgeDecision.BREAKER_NOT_CLOSED)));
    }
    if (runs.stream().anyMatch(r -> r.variant().limit() != null)) {
      row(rows, runs, "shed by limiter", r -> Long.toString(r.total(Col.SHED)));
      if (runs.stream()
          .anyMatch(r -> r.variant().limit() != null && r.variant().breaker() != null)) {
        row(rows, runs, "probes shed", r -> Long.toString(r.decisions().probesShed()));
      }
      row(
          rows,
          runs,
          "limit (fleet, fault)",
          r -> r.variant().limit() == null ? "-" : fmt("%.0f", r.faultMean(Col.LIMIT)));
    }
    row(
        rows,
        runs,
        "recovery time",
        r ->
            r.hasRecovery()
                ? (r.recoverySeconds() < 0 ? "never" : r.recoverySeconds() + "s")
                : "-");
    row(rows, runs, "max probes/s", r -> Long.toString(r.maxProbesPerSecond()));
    row(rows, runs, "peak busy workers (fleet)", r -> Long.toString(r.peakBusyWorkers()));
    row(
        rows,
        runs,
        "worker-s edge (fault)",
        r -> fmt("%.0f", r.faultWorkerSeconds(Col.WS_EDGE_MS)));
    if (runs.stream().anyMatch(r -> r.variant().tierTimeoutsMillis().size() == 3)) {
      row(rows, runs, "worker-s shield (fault)", r -> tiered(r, Col.WS_SHIELD_MS));
      row(rows, runs, "worker-s connector (fault)", r -> tiered(r, Col.WS_CONNECTOR_MS));
    }
    for (int i = 0; i < sc.timeline().size(); i++) {
      int phase = i;
      row(
          rows,
          runs,
          "answered/s " + sc.timeline().get(i).name(),
          r -> fmt("%.0f", r.steadyRate(Col.ANSWERED, phase)));
    }
    return rows;
  }

  private interface Cell {
    String of(RunResult r);
  }

  private static void row(List<String[]> rows, List<RunResult> runs, String label, Cell cell) {
    String[] row = new String[runs.size() + 1];
    row[0] = label;
    for (int i = 0; i < runs.size(); i++) {
      row[i + 1] = cell.of(runs.get(i));
    }
    rows.add(row);
  }

  private static String table(List<String[]> rows) {
    int cols = rows.get(0).length;
    int[] width = new int[cols];
    for (String[] r : rows) {
      for (int c = 0; c < cols; c++) {
        width[c] = Math.max(width[c], r[c].length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (String[] r : rows) {
      for (int c = 0; c < cols; c++) {
        if (c == 0) {
          out.append(String.format(Locale.ROOT, "%-" + width[c] + "s", r[c]));
        } else {
          out.append("  ").append(String.format(Locale.ROOT, "%" + width[c] + "s", r[c]));
        }
      }
      out.append('\n');
    }
    return out.toString();
  }

  /** Attempts/s accepted by the origin, with its workers' utilisation or mean attempts inside. */
  private static String originLoad(RunResult r, int phase) {
    String rate = fmt("%.0f/s", r.phaseRate(Col.ORIGIN_ACCEPTED, phase));
    double u = r.phaseUtilisation(phase);
    return Double.isNaN(u)
        ? rate + " L " + fmt("%.0f", r.phaseInOrigin(phase))
        : rate + " " + fmt("%.0f%%", u * 100) + " busy";
  }

  private static String tiered(RunResult r, Col col) {
    return r.variant().tierTimeoutsMillis().size() == 3
        ? fmt("%.0f", r.faultWorkerSeconds(col))
        : "-";
  }

  static String fmt(String format, double v) {
    return String.format(Locale.ROOT, format, v);
  }

  static String pct(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f%%", v * 100);
  }

  /** One run's time series: a header and one line per simulated second. */
  static String csv(RunResult r) {
    StringBuilder out = new StringBuilder("second,phase");
    for (Col c : Col.values()) {
      out.append(',').append(c.header());
    }
    out.append(",sick_p50_ms,sick_p99_ms\n");
    Scenario sc = r.scenario();
    for (int s = 0; s < r.series().seconds(); s++) {
      out.append(s).append(',').append(phaseAt(sc, s));
      for (Col c : Col.values()) {
        out.append(',').append(r.series().get(s, c));
      }
      out.append(',').append(millis(r.series().latencyQuantileMillis(s, 0.50)));
      out.append(',').append(millis(r.series().latencyQuantileMillis(s, 0.99)));
      out.append('\n');
    }
    return out.toString();
  }

  private static String latency(double millis) {
    if (Double.isNaN(millis)) {
      return "-";
    }
    if (millis < 1) {
      return "<1ms";
    }
    return millis >= 1000
        ? String.format(Locale.ROOT, "%.2fs", millis / 1000)
        : String.format(Locale.ROOT, "%.1fms", millis);
  }

  private static String millis(double v) {
    return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.1f", v);
  }

  static String phaseAt(Scenario sc, int second) {
    for (int i = sc.timeline().size() - 1; i >= 0; i--) {
      if (second + 1e-9 >= sc.phaseStart(i)) {
        return sc.timeline().get(i).name();
      }
    }
    return sc.timeline().get(0).name();
  }

  /** A file name for a scenario's HTML report, made like {@link #csvFileName}. */
  static String htmlFileName(Scenario sc) {
    String base = sc.name().toLowerCase(Locale.ROOT);
    return base.replaceAll("[^a-z0-9-]+", "-").replaceAll("-+$", "") + ".html";
  }

  /** A file name for a run's CSV: scenario and variant, anything but [a-z0-9-] made a dash. */
  static String csvFileName(RunResult r) {
    String base = (r.scenario().name() + "-" + r.variant().name()).toLowerCase(Locale.ROOT);
    return base.replaceAll("[^a-z0-9-]+", "-").replaceAll("-+$", "") + ".csv";
  }
}
