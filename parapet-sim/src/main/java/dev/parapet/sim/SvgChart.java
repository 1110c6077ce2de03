package dev.parapet.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A line chart as SVG text, with no script and no external asset: panels side by side (one per
 * variant) sharing one y scale, so that a protected run and an unprotected one compare at a glance.
 * Each series is one {@code <path class="series">}; shaded bands mark the phases of the fault
 * timeline (or the breaker's states, in a replay). Every number is written with {@link Locale#ROOT}
 * and one decimal, so the same data gives the same bytes.
 */
final class SvgChart {
  static final String[] PALETTE = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"
  };
  private static final int PANEL_W = 460;
  private static final int PANEL_H = 230;
  private static final int LEFT = 56;
  private static final int RIGHT = 12;
  private static final int TOP = 30;
  private static final int BOTTOM = 44;

  /** One series: a value per x step (NaN leaves a gap). */
  record Line(String name, String color, double[] values, boolean dashed) {}

  /** A shaded stretch of x, labelled at its top. */
  record Band(double from, double to, String label, String fill) {}

  /** One panel: its title, bands and lines. */
  static final class Panel {
    final String title;
    final List<Band> bands = new ArrayList<>();
    final List<Line> lines = new ArrayList<>();

    Panel(String title) {
      this.title = title;
    }

    Panel band(double from, double to, String label, String fill) {
      bands.add(new Band(from, to, label, fill));
      return this;
    }

    Panel line(String name, String color, double[] values) {
      lines.add(new Line(name, color, values, false));
      return this;
    }

    Panel dashed(String name, String color, double[] values) {
      lines.add(new Line(name, color, values, true));
      return this;
    }
  }

  private final String title;
  private final String xLabel;
  private final String yLabel;
  private final double xStep;
  private final List<Panel> panels = new ArrayList<>();
  private double fixedYMax = Double.NaN;

  /**
   * @param xStep x units (seconds) per value of a line
   */
  SvgChart(String title, String xLabel, String yLabel, double xStep) {
    this.title = title;
    this.xLabel = xLabel;
    this.yLabel = yLabel;
    this.xStep = xStep;
  }

  SvgChart yMax(double max) {
    this.fixedYMax = max;
    return this;
  }

  Panel panel(String panelTitle) {
    Panel p = new Panel(panelTitle);
    panels.add(p);
    return p;
  }

  int width() {
    return Math.max(1, panels.size()) * PANEL_W;
  }

  int height() {
    int rows = 1;
    for (Panel p : panels) {
      rows = Math.max(rows, legendRows(p));
    }
    return PANEL_H + 12 + 14 * rows;
  }

  private static int legendWidth(Line l) {
    return 24 + 6 * l.name().length();
  }

  /** Legend rows a panel needs: items flow left to right and wrap at the panel's edge. */
  private static int legendRows(Panel p) {
    int rows = 1;
    int x = LEFT;
    for (Line l : p.lines) {
      if (x > LEFT && x + legendWidth(l) > PANEL_W - RIGHT) {
        rows++;
        x = LEFT;
      }
      x += legendWidth(l);
    }
    return rows;
  }

  /** The chart as one {@code <svg>} element (with its namespace, so it also stands alone). */
  String render() {
    double xMax = 1;
    double yMax = 0;
    for (Panel p : panels) {
      for (Line l : p.lines) {
        xMax = Math.max(xMax, l.values().length * xStep);
        for (double v : l.values()) {
          if (!Double.isNaN(v)) {
            yMax = Math.max(yMax, v);
          }
        }
      }
    }
    double yStep = niceStep(Double.isNaN(fixedYMax) ? yMax / 4 : fixedYMax / 4);
    yMax =
        Double.isNaN(fixedYMax) ? yStep * Math.max(1, Math.ceil(yMax / yStep - 1e-9)) : fixedYMax;
    StringBuilder out = new StringBuilder();
    out.append(
            String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0"
                    + " %d %d\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\">",
                width(),
                height(),
                width(),
                height()))
        .append('\n');
    out.append("<title>").append(esc(title)).append("</title>\n");
    out.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    out.append(
        String.format(
            Locale.ROOT,
            "<text x=\"8\" y=\"16\" font-size=\"13\" font-weight=\"bold\">%s</text>%n",
            esc(title)));
    for (int i = 0; i < panels.size(); i++) {
      panel(out, panels.get(i), i * PANEL_W, 22, xMax, yMax, yStep);
    }
    out.append("</svg>\n");
    return out.toString();
  }

  private void panel(
      StringBuilder out, Panel p, int ox, int oy, double xMax, double yMax, double yStep) {
    int w = PANEL_W - LEFT - RIGHT;
    int h = PANEL_H - TOP - BOTTOM;
    int x0 = ox + LEFT;
    int y0 = oy + TOP;
    out.append(String.format(Locale.ROOT, "<g class=\"panel\" data-title=\"%s\">%n", esc(p.title)));
    out.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>%n",
            x0,
            oy + 12,
            esc(p.title)));
    for (Band b : p.bands) {
      double bx0 = x0 + w * clamp(b.from() / xMax);
      double bx1 = x0 + w * clamp(b.to() / xMax);
      if (bx1 - bx0 <= 0) {
        continue;
      }
      out.append(
          String.format(
              Locale.ROOT,
              "<rect class=\"band\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>%n",
              bx0,
              y0,
              bx1 - bx0,
              h,
              b.fill()));
      if (!b.label().isEmpty() && bx1 - bx0 > 6 + 5.5 * b.label().length()) {
        out.append(
            String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" fill=\"#555555\">%s</text>%n",
                bx0 + 2,
                y0 + 10,
                esc(b.label())));
      }
    }
    // Axes and grid.
    int yTicks = (int) Math.round(yMax / yStep);
    for (int i = 0; i <= yTicks; i++) {
      double v = yStep * i;
      double y = y0 + h - h * v / yMax;
      out.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>%n"
                  + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
              x0,
              y,
              x0 + w,
              y,
              x0 - 4,
              y + 4,
              tick(v)));
    }
    double xTick = niceStep(xMax / 6);
    for (double x = 0; x <= xMax + 1e-9; x += xTick) {
      double px = x0 + w * (x / xMax);
      out.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999999\"/>%n"
                  + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
              px,
              y0 + h,
              px,
              y0 + h + 4,
              px,
              y0 + h + 15,
              tick(x)));
    }
    out.append(
        String.format(
            Locale.ROOT,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999999\"/>%n",
            x0,
            y0,
            w,
            h));
    out.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555555\">%s</text>%n"
                + "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555555\""
                + " transform=\"rotate(-90 %d %d)\">%s</text>%n",
            x0 + w / 2,
            y0 + h + 28,
            esc(xLabel),
            ox + 12,
            y0 + h / 2,
            ox + 12,
            y0 + h / 2,
            esc(yLabel)));
    // Series.
    for (Line l : p.lines) {
      StringBuilder d = new StringBuilder();
      boolean pen = false;
      double[] vs = l.values();
      for (int i = 0; i < vs.length; i++) {
        if (Double.isNaN(vs[i])) {
          pen = false;
          continue;
        }
        double px = x0 + w * clamp((i + 0.5) * xStep / xMax);
        double py = y0 + h - h * clamp(yMax <= 0 ? 0 : vs[i] / yMax);
        d.append(pen ? " L" : (d.length() == 0 ? "M" : " M"));
        d.append(String.format(Locale.ROOT, "%.1f %.1f", px, py));
        pen = true;
      }
      out.append(
          String.format(
              Locale.ROOT,
              "<path class=\"series\" data-series=\"%s\" d=\"%s\" fill=\"none\" stroke=\"%s\""
                  + " stroke-width=\"1.5\"%s/>%n",
              esc(l.name()),
              d.length() == 0 ? "M0 0" : d,
              l.color(),
              l.dashed() ? " stroke-dasharray=\"5 3\"" : ""));
    }
    // Legend, under the plot.
    int lx = x0;
    int ly = oy + PANEL_H + 2;
    for (Line l : p.lines) {
      if (lx > x0 && lx + legendWidth(l) > ox + PANEL_W - RIGHT) {
        lx = x0;
        ly += 14;
      }
      out.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>"
                  + "<text x=\"%d\" y=\"%d\">%s</text>%n",
              lx,
              ly - 4,
              lx + 14,
              ly - 4,
              l.color(),
              l.dashed() ? " stroke-dasharray=\"5 3\"" : "",
              lx + 17,
              ly,
              esc(l.name())));
      lx += legendWidth(l);
    }
    out.append("</g>\n");
  }

  private static double clamp(double v) {
    return Math.max(0, Math.min(1, v));
  }

  private static double niceStep(double v) {
    if (!(v > 0)) {
      return 1;
    }
    double p = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 2, 2.5, 5, 10}) {
      if (m * p >= v) {
        return m * p;
      }
    }
    return 10 * p;
  }

  private static String tick(double v) {
    double a = Math.abs(v);
    if (a >= 1e6) {
      return trim(String.format(Locale.ROOT, "%.1f", v / 1e6)) + "M";
    }
    if (a >= 1e4) {
      return trim(String.format(Locale.ROOT, "%.1f", v / 1e3)) + "k";
    }
    if (a >= 10 || v == Math.rint(v)) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    return trim(String.format(Locale.ROOT, "%.2f", v));
  }

  private static String trim(String s) {
    if (s.indexOf('.') < 0) {
      return s;
    }
    String t = s.replaceAll("0+$", "");
    return t.endsWith(".") ? t.substring(0, t.length() - 1) : t;
  }

  /** Escapes text for XML content and attribute values. */
  static String esc(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&' -> out.append("&amp;");
        case '<' -> out.append("&lt;");
        case '>' -> out.append("&gt;");
        case '"' -> out.append("&quot;");
        case '\'' -> out.append("&#39;");
        default -> {
          if (c < 0x20 && c != '\n' && c != '\t') {
            out.append(' ');
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.toString();
  }
}
