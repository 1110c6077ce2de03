package dev.parapet.sim;

import static dev.parapet.sim.SvgChart.esc;

import dev.parapet.core.breaker.State;
import dev.parapet.sim.Series.Col;
import dev.parapet.sim.replay.Bins;
import dev.parapet.sim.replay.PolicyResult;
import dev.parapet.sim.replay.ReplayOptions;
import dev.parapet.sim.replay.ReplayReport;
import dev.parapet.sim.replay.ReplayResult;
import dev.parapet.sim.replay.RouteResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The HTML reports: one self-contained page (inline CSS and SVG, no script, no external asset) per
 * simulated scenario or replayed log. The page is XHTML (well-formed XML served as HTML), so it can
 * be checked with an XML parser and opened in any browser. Deterministic like the rest of the
 * output: the same runs give the same bytes.
 */
final class HtmlReport {
  private static final String FAULT_FILL = "#fde0dc";
  private static final String CALM_FILL = "#eef5ea";
  private static final int MAX_REPLAY_CHARTS = 20;

  private HtmlReport() {}

  /** The page for one scenario's variants, side by side. */
  static String scenario(List<RunResult> runs) {
    Scenario sc = runs.get(0).scenario();
    StringBuilder out = new StringBuilder();
    head(out, "parapet sim: " + sc.name() + " (seed " + runs.get(0).seed() + ")");
    String[] lines = Report.summary(runs).split("\n");
    // The summary's first lines describe the scenario; the table follows them.
    out.append("<p>").append(esc(sc.description())).append("</p>\n<ul>\n");
    int tableStart = lines.length - Report.summaryRows(runs).size();
    for (int i = 1; i < tableStart; i++) {
      out.append("<li>").append(esc(lines[i])).append("</li>\n");
    }
    out.append("</ul>\n<h2>Summary</h2>\n");
    table(out, Report.summaryRows(runs));
    out.append("<h2>Per second</h2>\n");
    out.append(
        "<p class=\"note\">Shaded: the origin's fault phases (red) and its healthy phases"
            + " (green). One panel per variant, same scale.</p>\n");
    for (SvgChart c : charts(runs)) {
      out.append("<figure>\n").append(c.render()).append("</figure>\n");
    }
    foot(out);
    return out.toString();
  }

  /** The scenario's charts, in page order; the first one is the README's. */
  static List<SvgChart> charts(List<RunResult> runs) {
    Scenario sc = runs.get(0).scenario();
    List<SvgChart> charts = new ArrayList<>();

    SvgChart load =
        new SvgChart(sc.name() + ": requests to the origin under test", "second", "per second", 1);
    boolean limited = runs.stream().anyMatch(r -> r.variant().limit() != null);
    boolean hedged = runs.stream().anyMatch(r -> r.variant().hedge());
    for (RunResult r : runs) {
      SvgChart.Panel p =
          phases(load.panel(r.variant().name()), sc)
              .dashed("offered", "#777777", col(r, Col.SICK_OFFERED))
              .line("origin attempts", SvgChart.PALETTE[0], col(r, Col.ATTEMPTS))
              .line("retries", SvgChart.PALETTE[3], col(r, Col.RETRIES))
              .line("good answers", SvgChart.PALETTE[2], col(r, Col.SICK_USER_OK))
              .line("fast fails", SvgChart.PALETTE[1], col(r, Col.FAST_FAIL));
      if (sc.capacity().limited() || sc.cache().hitRatio() > 0) {
        p.line("origin goodput", SvgChart.PALETTE[4], col(r, Col.ORIGIN_OK));
      }
      if (limited) {
        p.line("shed by limiter", SvgChart.PALETTE[6], col(r, Col.SHED));
      }
      if (hedged) {
        p.line("hedges", SvgChart.PALETTE[5], col(r, Col.HEDGES));
      }
    }
    charts.add(load);
    if (limited) {
      SvgChart limit =
          new SvgChart(sc.name() + ": concurrency limit (sum over servers)", "second", "limit", 1);
      for (RunResult r : runs) {
        phases(limit.panel(r.variant().name()), sc)
            .line("limit", SvgChart.PALETTE[6], col(r, Col.LIMIT));
      }
      charts.add(limit);
    }

    SvgChart success = new SvgChart(sc.name() + ": success rate", "second", "%", 1).yMax(100);
    for (RunResult r : runs) {
      SvgChart.Panel p =
          phases(success.panel(r.variant().name()), sc)
              .line("all requests", SvgChart.PALETTE[2], rate(r, Col.USER_OK, Col.OFFERED));
      p.line("origin under test", SvgChart.PALETTE[0], rate(r, Col.SICK_USER_OK, Col.SICK_OFFERED));
    }
    charts.add(success);

    SvgChart breakers =
        new SvgChart(sc.name() + ": breakers", "second", "breakers / probes per second", 1);
    for (RunResult r : runs) {
      phases(breakers.panel(r.variant().name()), sc)
          .line("breakers not closed", SvgChart.PALETTE[1], col(r, Col.BREAKERS_NOT_CLOSED))
          .line("half-open probes/s", SvgChart.PALETTE[4], col(r, Col.PROBES));
    }
    charts.add(breakers);

    SvgChart latency =
        new SvgChart(
            sc.name() + ": latency of requests to the origin under test", "second", "ms", 1);
    for (RunResult r : runs) {
      phases(latency.panel(r.variant().name()), sc)
          .line("p50", SvgChart.PALETTE[0], quantile(r, 0.50))
          .line("p99", SvgChart.PALETTE[1], quantile(r, 0.99));
    }
    charts.add(latency);

    SvgChart workers = new SvgChart(sc.name() + ": busy workers (fleet)", "second", "workers", 1);
    for (RunResult r : runs) {
      phases(workers.panel(r.variant().name()), sc)
          .line("busy workers", SvgChart.PALETTE[5], col(r, Col.BUSY_WORKERS));
    }
    charts.add(workers);
    return charts;
  }

  private static SvgChart.Panel phases(SvgChart.Panel p, Scenario sc) {
    int n = sc.timeline().size();
    for (int i = 0; i < n; i++) {
      boolean fault = n >= 3 ? i > 0 && i < n - 1 : i > 0;
      double from = sc.phaseStart(i);
      p.band(
          from,
          from + sc.timeline().get(i).seconds(),
          sc.timeline().get(i).name(),
          fault ? FAULT_FILL : CALM_FILL);
    }
    return p;
  }

  private static double[] col(RunResult r, Col c) {
    double[] v = new double[r.series().seconds()];
    for (int s = 0; s < v.length; s++) {
      v[s] = r.series().get(s, c);
    }
    return v;
  }

  private static double[] rate(RunResult r, Col ok, Col of) {
    double[] v = new double[r.series().seconds()];
    for (int s = 0; s < v.length; s++) {
      long d = r.series().get(s, of);
      v[s] = d == 0 ? Double.NaN : 100.0 * r.series().get(s, ok) / d;
    }
    return v;
  }

  private static double[] quantile(RunResult r, double q) {
    double[] v = new double[r.series().seconds()];
    for (int s = 0; s < v.length; s++) {
      v[s] = r.series().latencyQuantileMillis(s, q);
    }
    return v;
  }

  /**
   * The page for a shadow replay: the policies side by side, then per route what each would have
   * done and when. Series come in the replay's bins (at most {@link Bins#MAX_BINS} points per line,
   * whatever the log's length).
   */
  static String replay(ReplayResult result, ReplayOptions options) {
    StringBuilder out = new StringBuilder();
    head(out, "parapet sim replay: what the breaker policy would have done");
    out.append("<p>Shadow replay: every policy runs in shadow mode whatever its mode; a request")
        .append(" it admitted only because of shadow mode is one it would have rejected.</p>\n");
    for (PolicyResult p : result.policies()) {
      out.append("<p class=\"note\">Policy ")
          .append(esc(p.name()))
          .append(": ")
          .append(esc(p.policy().toString()))
          .append("</p>\n");
    }
    out.append("<h2>Policies</h2>\n");
    table(out, ReplayReport.sideBySide(result));
    for (PolicyResult p : result.policies()) {
      out.append("<h2>Routes, policy ").append(esc(p.name())).append("</h2>\n");
      table(out, ReplayReport.routes(p));
    }
    List<ReplayResult.Traffic> charted = new ArrayList<>(result.traffic());
    charted.sort(
        Comparator.comparingLong((ReplayResult.Traffic t) -> -total(result.series(t.requests())))
            .thenComparing(ReplayResult.Traffic::route));
    if (charted.size() > MAX_REPLAY_CHARTS) {
      out.append("<p class=\"note\">Charts for the ")
          .append(MAX_REPLAY_CHARTS)
          .append(" busiest routes of ")
          .append(charted.size())
          .append(".</p>\n");
      charted = charted.subList(0, MAX_REPLAY_CHARTS);
    }
    out.append("<h2>Timelines</h2>\n")
        .append("<p class=\"note\">One panel per policy. Shaded: the breaker's state (red open,")
        .append(" orange half-open, yellow ramping); unshaded is closed.</p>\n");
    double bin = result.binNanos() / 1e9;
    String unit = bin == 1 ? "per second" : String.format(Locale.ROOT, "per %.0f s", bin);
    for (ReplayResult.Traffic t : charted) {
      long[] requests = result.series(t.requests());
      long[] failures = result.series(t.failures());
      SvgChart c = new SvgChart("route " + t.route(), "seconds from the first record", unit, bin);
      SvgChart share =
          new SvgChart("route " + t.route() + ": share rejected", "seconds", "%", bin).yMax(100);
      for (PolicyResult p : result.policies()) {
        RouteResult r = p.route(t.route());
        long[] rejects = result.series(r.rejects);
        states(c.panel(p.name()), r, requests.length * bin)
            .line("requests", SvgChart.PALETTE[0], toDouble(requests))
            .line("failures", SvgChart.PALETTE[3], toDouble(failures))
            .line("would reject", SvgChart.PALETTE[1], toDouble(rejects));
        double[] pct = new double[requests.length];
        double[] failed = new double[requests.length];
        for (int i = 0; i < pct.length; i++) {
          pct[i] = requests[i] == 0 ? Double.NaN : 100.0 * rejects[i] / requests[i];
          failed[i] = requests[i] == 0 ? Double.NaN : 100.0 * failures[i] / requests[i];
        }
        // the log's failed share beside what the policy would have rejected: real trouble or not
        states(share.panel(p.name() + ": would reject (%)"), r, requests.length * bin)
            .dashed("failed (%)", "#777777", failed)
            .line("would reject", SvgChart.PALETTE[1], pct);
      }
      out.append("<figure>\n").append(c.render()).append("</figure>\n");
      out.append("<figure>\n").append(share.render()).append("</figure>\n");
    }
    foot(out);
    return out.toString();
  }

  private static long total(long[] v) {
    long s = 0;
    for (long x : v) {
      s += x;
    }
    return s;
  }

  private static SvgChart.Panel states(SvgChart.Panel p, RouteResult r, double endSeconds) {
    State state = State.CLOSED;
    double since = 0;
    for (RouteResult.StateChange t : r.states) {
      band(p, state, since, t.nanos() / 1e9);
      state = t.to();
      since = t.nanos() / 1e9;
    }
    band(p, state, since, endSeconds);
    return p;
  }

  private static void band(SvgChart.Panel p, State s, double from, double to) {
    switch (s) {
      case OPEN, FORCED_OPEN -> p.band(from, to, "open", "#f8c4bd");
      case HALF_OPEN -> p.band(from, to, "", "#fbd9a8");
      case RAMPING -> p.band(from, to, "ramping", "#fbf0b4");
      default -> {}
    }
  }

  private static double[] toDouble(long[] v) {
    double[] d = new double[v.length];
    for (int i = 0; i < v.length; i++) {
      d[i] = v[i];
    }
    return d;
  }

  static void head(StringBuilder out, String title) {
    out.append("<!DOCTYPE html>\n")
        .append("<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n")
        .append("<meta charset=\"utf-8\"/>\n<title>")
        .append(esc(title))
        .append("</title>\n<style>\n")
        .append("body{font-family:sans-serif;margin:1.5em;color:#222}")
        .append("table{border-collapse:collapse;font-size:13px}")
        .append("td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}")
        .append("td:first-child,th:first-child{text-align:left}")
        .append("figure{margin:1em 0;overflow-x:auto}.note{color:#555;font-size:13px}")
        .append("\n</style>\n</head>\n<body>\n<h1>")
        .append(esc(title))
        .append("</h1>\n");
  }

  static void foot(StringBuilder out) {
    out.append("<p class=\"note\">Written by parapet sim, in virtual time: the same input and")
        .append(" seed give this page byte for byte.</p>\n</body>\n</html>\n");
  }

  static void table(StringBuilder out, List<String[]> rows) {
    out.append("<table>\n");
    for (int i = 0; i < rows.size(); i++) {
      String cell = i == 0 ? "th" : "td";
      out.append("<tr>");
      for (String c : rows.get(i)) {
        out.append('<').append(cell).append('>').append(esc(c)).append("</").append(cell);
        out.append('>');
      }
      out.append("</tr>\n");
    }
    out.append("</table>\n");
  }
}
