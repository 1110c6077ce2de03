package dev.parapet.sim;

import static dev.parapet.sim.SvgChart.esc;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.sim.Series.Col;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * {@code sim sweep}: one scenario variant run over several values of one protection parameter, each
 * with several seeds, so a threshold is chosen from a trend and its spread rather than from one
 * run. For each value the summary gives, over the seeds, the mean, the standard deviation and the
 * range of what the scenario's report calls user success (fault phases and whole run), origin
 * goodput and origin attempts during the fault, and recovery time.
 *
 * <p>Recovery time is censored: a run that never got back to its baseline counts as the whole
 * recovery phase, and the number of such runs is shown.
 */
final class Sweep {
  private Sweep() {}

  /** A protection parameter a sweep can vary. */
  enum Param {
    FAILURE_THRESHOLD(
        "failure_threshold", "breaker failure rate that opens it", 0.2, 0.35, 0.5, 0.65, 0.8),
    BUDGET_RATIO(
        "budget_ratio", "retry budget, share of active requests", 0.05, 0.1, 0.2, 0.3, 0.5),
    OPEN_DURATION("open_duration", "breaker open time before probing, seconds", 5, 15, 30, 60, 120);

    final String key;
    final String meaning;
    final double[] defaults;

    Param(String key, String meaning, double... defaults) {
      this.key = key;
      this.meaning = meaning;
      this.defaults = defaults;
    }

    static Param parse(String text) {
      for (Param p : values()) {
        if (p.key.equals(text)) {
          return p;
        }
      }
      throw new IllegalArgumentException(
          "--param : "
              + text
              + " (expected: one of failure_threshold, budget_ratio, open_duration)");
    }

    /** {@code v} with this parameter set to {@code value}. */
    Variant apply(Variant v, double value) {
      BreakerPolicy b = v.breaker();
      switch (this) {
        case FAILURE_THRESHOLD, OPEN_DURATION -> {
          if (b == null) {
            throw new IllegalArgumentException(
                "--param "
                    + key
                    + " : variant '"
                    + v.name()
                    + "' has no breaker (expected: one"
                    + " with a breaker, see --variant)");
          }
          if (this == FAILURE_THRESHOLD && !(value > 0 && value <= 1)) {
            throw new IllegalArgumentException(key + " : " + value + " (expected: in (0, 1])");
          }
          if (this == OPEN_DURATION && !(value > 0)) {
            throw new IllegalArgumentException(key + " : " + value + " (expected: > 0 seconds)");
          }
          BreakerPolicy changed =
              this == FAILURE_THRESHOLD
                  ? b.toBuilder().failureRate(value).build()
                  : withOpenBase(b, Duration.ofNanos((long) (value * 1e9)));
          return with(v, changed, v.budgetRatio());
        }
        case BUDGET_RATIO -> {
          if (v.retry() != RetryMode.BUDGET) {
            throw new IllegalArgumentException(
                "--param budget_ratio : variant '"
                    + v.name()
                    + "' has no retry budget (expected:"
                    + " retry mode budget, see --variant)");
          }
          if (!(value > 0 && value < 1)) {
            throw new IllegalArgumentException(key + " : " + value + " (expected: in (0, 1))");
          }
          return with(v, b, value);
        }
      }
      throw new AssertionError(this);
    }

    String format(double value) {
      return this == OPEN_DURATION
          ? String.format(Locale.ROOT, "%.0fs", value)
          : String.format(Locale.ROOT, "%.0f%%", value * 100);
    }
  }

  private static BreakerPolicy withOpenBase(BreakerPolicy b, Duration base) {
    Duration max = b.openMax().compareTo(base) < 0 ? base : b.openMax();
    return b.toBuilder().open(base, max, b.openJitter()).build();
  }

  private static Variant with(Variant v, @Nullable BreakerPolicy b, double budgetRatio) {
    return new Variant(
        v.name(),
        b,
        v.retry(),
        budgetRatio,
        v.budgetMin(),
        v.tierTimeoutsMillis(),
        v.limit(),
        v.hedge(),
        v.deadlines());
  }

  /** What one sweep measures, per run. */
  enum Metric {
    USER_SUCCESS_FAULT("user success (fault)", true),
    SUCCESS("success rate", true),
    GOODPUT_FAULT("origin goodput/s (fault)", false),
    ATTEMPTS_FAULT("origin attempts/s (fault)", false),
    RECOVERY("recovery time (s)", false);

    final String label;
    final boolean percent;

    Metric(String label, boolean percent) {
      this.label = label;
      this.percent = percent;
    }

    double of(RunResult r) {
      return switch (this) {
        case USER_SUCCESS_FAULT -> r.faultUserSuccess();
        case SUCCESS -> r.successRate();
        case GOODPUT_FAULT -> r.faultRate(Col.ORIGIN_OK);
        case ATTEMPTS_FAULT -> r.faultAttemptsPerSecond();
        case RECOVERY -> {
          int s = r.recoverySeconds();
          int last = r.scenario().timeline().size() - 1;
          yield s >= 0 ? s : r.phaseEndSecond(last) - r.phaseStartSecond(last);
        }
      };
    }
  }

  /** Mean, standard deviation (n − 1) and range of one metric over the seeds. */
  record Stats(double mean, double sd, double min, double max) {
    static Stats of(double[] v) {
      double sum = 0;
      double min = Double.POSITIVE_INFINITY;
      double max = Double.NEGATIVE_INFINITY;
      for (double x : v) {
        sum += x;
        min = Math.min(min, x);
        max = Math.max(max, x);
      }
      double mean = sum / v.length;
      double ss = 0;
      for (double x : v) {
        ss += (x - mean) * (x - mean);
      }
      return new Stats(mean, v.length > 1 ? Math.sqrt(ss / (v.length - 1)) : 0, min, max);
    }
  }

  /** The sweep's outcome: per value, per metric, the stats over the seeds. */
  record Result(
      Scenario scenario,
      Variant variant,
      Param param,
      double[] values,
      int seeds,
      Stats[][] stats,
      int[] neverRecovered) {}

  /** The variant named {@code name}, or the scenario's last (its most protected) when null. */
  static Variant variant(Scenario sc, @Nullable String name) {
    if (name == null || name.isEmpty()) {
      return sc.variants().get(sc.variants().size() - 1);
    }
    for (Variant v : sc.variants()) {
      if (v.name().equals(name)) {
        return v;
      }
    }
    List<String> names = new ArrayList<>();
    sc.variants().forEach(v -> names.add(v.name()));
    throw new IllegalArgumentException("--variant : " + name + " (expected: one of " + names + ")");
  }

  /** Runs {@code base} with {@code param} at each of {@code values}, seeds 1 to {@code seeds}. */
  static Result run(Scenario sc, Variant base, Param param, double[] values, int seeds) {
    if (seeds < 1 || seeds > 1000) {
      throw new IllegalArgumentException("--seeds : " + seeds + " (expected: in [1, 1000])");
    }
    if (values.length == 0) {
      throw new IllegalArgumentException("--values : empty (expected: at least one value)");
    }
    Metric[] metrics = Metric.values();
    Stats[][] stats = new Stats[values.length][metrics.length];
    int[] never = new int[values.length];
    for (int i = 0; i < values.length; i++) {
      Variant v = param.apply(base, values[i]);
      double[][] samples = new double[metrics.length][seeds];
      for (int s = 0; s < seeds; s++) {
        RunResult r = FleetSimulation.run(sc, v, s + 1);
        for (int m = 0; m < metrics.length; m++) {
          samples[m][s] = metrics[m].of(r);
        }
        if (r.recoverySeconds() < 0) {
          never[i]++;
        }
      }
      for (int m = 0; m < metrics.length; m++) {
        stats[i][m] = Stats.of(samples[m]);
      }
    }
    return new Result(sc, base, param, values.clone(), seeds, stats, never);
  }

  /** The terminal table: one row per value, "mean ± sd [min, max]" per metric. */
  static String report(Result r) {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "sweep %s (%s) over scenario %s, variant %s, seeds 1..%d%n",
            r.param().key,
            r.param().meaning,
            r.scenario().name(),
            r.variant().name(),
            r.seeds()));
    out.append("cells: mean +- standard deviation [min, max] over the seeds\n");
    List<String[]> rows = rows(r);
    int cols = rows.get(0).length;
    int[] width = new int[cols];
    for (String[] row : rows) {
      for (int c = 0; c < cols; c++) {
        width[c] = Math.max(width[c], row[c].length());
      }
    }
    for (String[] row : rows) {
      for (int c = 0; c < cols; c++) {
        out.append(c == 0 ? "" : "  ");
        out.append(String.format(Locale.ROOT, "%-" + width[c] + "s", row[c]));
      }
      out.append('\n');
    }
    return out.toString().replaceAll(" +\n", "\n");
  }

  static List<String[]> rows(Result r) {
    Metric[] metrics = Metric.values();
    List<String[]> rows = new ArrayList<>();
    String[] header = new String[metrics.length + 2];
    header[0] = r.param().key;
    for (int m = 0; m < metrics.length; m++) {
      header[m + 1] = metrics[m].label;
    }
    header[metrics.length + 1] = "never recovered";
    rows.add(header);
    for (int i = 0; i < r.values().length; i++) {
      String[] row = new String[metrics.length + 2];
      row[0] = r.param().format(r.values()[i]);
      for (int m = 0; m < metrics.length; m++) {
        row[m + 1] = cell(r.stats()[i][m], metrics[m].percent);
      }
      row[metrics.length + 1] = r.neverRecovered()[i] + "/" + r.seeds();
      rows.add(row);
    }
    return rows;
  }

  private static String cell(Stats s, boolean percent) {
    double k = percent ? 100 : 1;
    String f = percent ? "%.2f" : "%.0f";
    return String.format(
        Locale.ROOT,
        f + " +- " + f + " [" + f + ", " + f + "]",
        s.mean() * k,
        s.sd() * k,
        s.min() * k,
        s.max() * k);
  }

  // ---------------------------------------------------------------------------------------------
  // The chart: one small SVG per metric, the parameter on x (its own scale), the mean as a line
  // through points, each point with a whisker from the lowest to the highest seed.

  private static final int W = 360;
  private static final int H = 220;
  private static final int LEFT = 60;
  private static final int RIGHT = 14;
  private static final int TOP = 28;
  private static final int BOTTOM = 40;

  static String chart(Result r, Metric metric) {
    int mi = metric.ordinal();
    double[] x = r.values();
    double k = metric.percent ? 100 : 1;
    double xMin = x[0];
    double xMax = x[0];
    double yMax = 0;
    for (int i = 0; i < x.length; i++) {
      xMin = Math.min(xMin, x[i]);
      xMax = Math.max(xMax, x[i]);
      yMax = Math.max(yMax, r.stats()[i][mi].max() * k);
    }
    if (metric.percent) {
      yMax = 100;
    } else {
      yMax = yMax <= 0 ? 1 : yMax * 1.1;
    }
    double xPad = xMax > xMin ? (xMax - xMin) * 0.05 : Math.max(Math.abs(xMin) * 0.5, 1);
    double x0 = xMin - xPad;
    double x1 = xMax + xPad;
    double plotW = W - LEFT - RIGHT;
    double plotH = H - TOP - BOTTOM;
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0"
                + " %d %d\" font-family=\"sans-serif\" font-size=\"11\" class=\"sweep\""
                + " data-metric=\"%s\">%n",
            W,
            H,
            W,
            H,
            esc(metric.label)));
    out.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"16\" font-size=\"13\" font-weight=\"bold\">%s</text>%n",
            LEFT,
            esc(metric.label)));
    out.append(
        String.format(
            Locale.ROOT,
            "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\" fill=\"none\""
                + " stroke=\"#999\"/>%n",
            LEFT,
            TOP,
            plotW,
            plotH));
    for (int t = 0; t <= 4; t++) {
      double v = yMax * t / 4;
      double y = TOP + plotH - plotH * t / 4;
      out.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
              LEFT - 4,
              y + 4,
              metric.percent ? String.format(Locale.ROOT, "%.0f%%", v) : fmtAxis(v)));
    }
    StringBuilder path = new StringBuilder();
    for (int i = 0; i < x.length; i++) {
      Stats s = r.stats()[i][mi];
      double px = LEFT + plotW * (x[i] - x0) / (x1 - x0);
      double py = TOP + plotH * (1 - s.mean() * k / yMax);
      double lo = TOP + plotH * (1 - s.min() * k / yMax);
      double hi = TOP + plotH * (1 - s.max() * k / yMax);
      path.append(i == 0 ? "M" : "L").append(String.format(Locale.ROOT, "%.1f %.1f", px, py));
      out.append(
          String.format(
              Locale.ROOT,
              "<line class=\"range\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\""
                  + " stroke=\"%s\"/>%n",
              px,
              lo,
              px,
              hi,
              SvgChart.PALETTE[1]));
      out.append(
          String.format(
              Locale.ROOT,
              "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n",
              px,
              py,
              SvgChart.PALETTE[0]));
      out.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>%n",
              px,
              TOP + plotH + 14,
              esc(r.param().format(x[i]))));
    }
    out.append(
        String.format(
            Locale.ROOT,
            "<path class=\"mean\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>%n",
            path,
            SvgChart.PALETTE[0]));
    out.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s (mean; bar: seed range)</text>%n",
            LEFT + plotW / 2,
            H - 8,
            esc(r.param().key)));
    out.append("</svg>\n");
    return out.toString();
  }

  private static String fmtAxis(double v) {
    return v >= 10_000
        ? String.format(Locale.ROOT, "%.0fk", v / 1000)
        : String.format(Locale.ROOT, "%.0f", v);
  }

  /** The sweep's HTML page: the table and one chart per metric. */
  static String html(Result r) {
    StringBuilder out = new StringBuilder();
    String title =
        "parapet sim sweep: "
            + r.param().key
            + " on "
            + r.scenario().name()
            + " ("
            + r.variant().name()
            + ")";
    HtmlReport.head(out, title);
    out.append("<p>")
        .append(esc(r.param().meaning))
        .append(", seeds 1 to ")
        .append(r.seeds())
        .append(". Cells: mean +- standard deviation [min, max] over the seeds.</p>\n");
    HtmlReport.table(out, rows(r));
    out.append("<h2>Trend</h2>\n<figure>\n");
    for (Metric m : Metric.values()) {
      out.append(chart(r, m));
    }
    out.append("</figure>\n");
    HtmlReport.foot(out);
    return out.toString();
  }
}
