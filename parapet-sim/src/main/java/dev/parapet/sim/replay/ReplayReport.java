package dev.parapet.sim.replay;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The replay's text report: what was read, the policies side by side, then per route. */
public final class ReplayReport {
  private ReplayReport() {}

  public static String text(ReplayResult r, ReplayOptions o) {
    StringBuilder out = new StringBuilder();
    out.append("shadow replay (every policy runs in shadow mode whatever its mode)\n");
    out.append(
        String.format(
            Locale.ROOT,
            "read %d lines: %d records from %s to %s (%s); %d bad, %d late (older than the %s"
                + " window%s), %d outside --from/--to%n",
            r.lines(),
            r.records(),
            instant(r.firstStartEpochNanos()),
            instant(r.firstStartEpochNanos() + r.lastStartNanos()),
            duration(r.lastStartNanos()),
            r.badLines(),
            r.late(),
            duration(o.window().toNanos()),
            r.firstLate() == null ? "" : ", first at " + r.firstLate(),
            r.outOfRange()));
    for (String b : r.badExamples()) {
      out.append("  bad line ").append(b).append('\n');
    }
    out.append(
        String.format(
            Locale.ROOT,
            "trouble: a route's %s bin with at least %d requests, %.0f%% or more of them failed or"
                + " slow (over %d ms)%n",
            duration(o.troubleBinNanos()),
            o.troubleMinRequests(),
            o.troubleRate() * 100,
            o.slow().toMillis()));
    for (PolicyResult p : r.policies()) {
      out.append("policy ").append(p.name()).append(": ").append(p.policy()).append('\n');
    }
    out.append('\n');
    table(out, sideBySide(r));
    for (PolicyResult p : r.policies()) {
      out.append('\n');
      if (r.policies().size() > 1) {
        out.append("policy ").append(p.name()).append(", per route:\n");
      }
      table(out, routes(p));
    }
    if (r.policies().size() == 1) {
      for (RouteResult rr : r.policies().get(0).routes()) {
        if (!rr.transitions.isEmpty()) {
          out.append("transitions ").append(rr.route).append(" (seconds from the first record):\n");
          for (String t : rr.transitions) {
            out.append("  ").append(t).append('\n');
          }
        }
      }
    }
    return out.toString();
  }

  /** One row per measure, one column per policy. */
  public static List<String[]> sideBySide(ReplayResult r) {
    List<PolicyResult> ps = r.policies();
    List<String[]> rows = new ArrayList<>();
    rows.add(row("policy", ps, PolicyResult::name));
    rows.add(row("first open", ps, p -> seconds(p.firstOpenNanos())));
    rows.add(
        row(
            "opens (re-opens after a probe or ramp)",
            ps,
            p -> p.opens() + " (" + p.reopens() + ")"));
    rows.add(row("false opens (in healthy periods)", ps, p -> Long.toString(p.falseOpens())));
    rows.add(row("flapping alerts", ps, p -> Long.toString(p.flappingAlerts())));
    rows.add(row("trouble episodes opened on", ps, p -> p.detected() + " of " + p.episodes()));
    rows.add(
        row(
            "time to open after trouble began, mean / max",
            ps,
            p ->
                p.detected() == 0
                    ? "-"
                    : seconds(p.meanTimeToOpenNanos()) + " / " + seconds(p.maxTimeToOpenNanos())));
    rows.add(
        row(
            "would reject during trouble",
            ps,
            p -> count(p.rejectedInTrouble(), p.troubleRequests())));
    rows.add(
        row(
            "would reject while healthy",
            ps,
            p -> count(p.rejectedHealthy(), p.requests() - p.troubleRequests())));
    rows.add(row("would reject in all", ps, p -> count(p.wouldReject(), p.requests())));
    return rows;
  }

  /** The per-route table of one policy. */
  public static List<String[]> routes(PolicyResult p) {
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "route", "requests", "failures", "slow", "first open", "opens", "would reject", "share"
        });
    for (RouteResult r : p.routes()) {
      rows.add(
          new String[] {
            r.route,
            Long.toString(r.requests),
            Long.toString(r.failures),
            Long.toString(r.slow),
            seconds(r.firstOpenNanos),
            Long.toString(r.opens),
            Long.toString(r.wouldReject),
            String.format(Locale.ROOT, "%.2f%%", r.rejectShare() * 100)
          });
    }
    return rows;
  }

  private interface Cell {
    String of(PolicyResult p);
  }

  private static String[] row(String label, List<PolicyResult> ps, Cell c) {
    String[] row = new String[ps.size() + 1];
    row[0] = label;
    for (int i = 0; i < ps.size(); i++) {
      row[i + 1] = c.of(ps.get(i));
    }
    return row;
  }

  private static String count(long n, long of) {
    return of == 0
        ? Long.toString(n)
        : String.format(Locale.ROOT, "%d of %d (%.2f%%)", n, of, 100.0 * n / of);
  }

  static String seconds(long nanos) {
    return nanos < 0 ? "never" : String.format(Locale.ROOT, "%.3fs", nanos / 1e9);
  }

  static String duration(long nanos) {
    double s = nanos / 1e9;
    if (s >= 3600) {
      return String.format(Locale.ROOT, "%.1f h", s / 3600);
    }
    return s >= 60
        ? String.format(Locale.ROOT, "%.1f min", s / 60)
        : String.format(Locale.ROOT, "%.0f s", s);
  }

  static String instant(long epochNanos) {
    return Instant.ofEpochSecond(
            Math.floorDiv(epochNanos, Scan.NANOS_PER_SECOND),
            Math.floorMod(epochNanos, Scan.NANOS_PER_SECOND))
        .toString();
  }

  private static void table(StringBuilder out, List<String[]> rows) {
    int cols = rows.get(0).length;
    int[] w = new int[cols];
    for (String[] row : rows) {
      for (int i = 0; i < cols; i++) {
        w[i] = Math.max(w[i], row[i].length());
      }
    }
    for (String[] row : rows) {
      for (int i = 0; i < cols; i++) {
        if (i == 0) {
          out.append(row[i]).append(" ".repeat(w[i] - row[i].length()));
        } else {
          out.append("  ").append(" ".repeat(w[i] - row[i].length())).append(row[i]);
        }
      }
      out.append('\n');
    }
  }
}
