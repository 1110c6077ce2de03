package dev.parapet.sim.replay;

/**
 * CSV with a header naming {@code time,route,status,latency_ms} in any order ({@code latency} is
 * taken for {@code latency_ms}); further columns are ignored; no quoted fields. The time is the
 * request's start.
 */
final class CsvLineParser extends LineParser {
  private static final String[] NAMES = {"time", "route", "status", "latency_ms"};
  private int[] columnOf = new int[0]; // column index -> field (0..3) or -1
  private int columns;

  CsvLineParser(RouteTable routes) {
    super(routes);
  }

  @Override
  boolean timeIsEnd() {
    return false;
  }

  @Override
  boolean parse(byte[] b, int from, int to) {
    if (blank(b, from, to)) {
      return false;
    }
    if (columns == 0) {
      header(b, from, to);
      return false;
    }
    reset();
    int col = 0;
    int found = 0;
    int start = from;
    for (int i = from; i <= to; i++) {
      if (i == to || b[i] == ',') {
        if (col < columnOf.length && columnOf[col] >= 0) {
          field(columnOf[col], b, trimStart(b, start, i), trimEnd(b, start, i));
          found++;
        }
        col++;
        start = i + 1;
      }
    }
    if (found < 4) {
      throw new BadLineException(
          "fields : " + col + " (expected: " + columns + " columns as in the header)");
    }
    return true;
  }

  private void field(int f, byte[] b, int from, int to) {
    switch (f) {
      case 0 -> time = Scan.time(b, from, to);
      case 1 -> route = routes.id(b, from, to);
      case 2 -> status = status(b, from, to);
      default -> latencyNanos = Scan.decimal(b, from, to, 1_000_000L, "latency_ms");
    }
  }

  static int status(byte[] b, int from, int to) {
    long s = Scan.digits(b, from, to, "status");
    if (s > 999 || (s != 0 && s < 100)) {
      throw Scan.bad("status", b, from, to, "0 or 100-999");
    }
    return (int) s;
  }

  private void header(byte[] b, int from, int to) {
    String line = Scan.text(b, from, to);
    String[] f = line.split(",", -1);
    int[] map = new int[f.length];
    boolean[] seen = new boolean[4];
    for (int i = 0; i < f.length; i++) {
      String h = f[i].strip().toLowerCase(java.util.Locale.ROOT);
      map[i] = -1;
      for (int k = 0; k < NAMES.length; k++) {
        if (h.equals(NAMES[k]) || (k == 3 && h.equals("latency"))) {
          map[i] = k;
          seen[k] = true;
        }
      }
    }
    for (boolean s : seen) {
      if (!s) {
        throw new BadLineException(
            "header : " + line + " (expected: columns time,route,status,latency_ms)");
      }
    }
    columnOf = map;
    columns = f.length;
  }

  private static int trimStart(byte[] b, int from, int to) {
    while (from < to && b[from] == ' ') {
      from++;
    }
    return from;
  }

  private static int trimEnd(byte[] b, int from, int to) {
    while (to > from && b[to - 1] == ' ') {
      to--;
    }
    return to;
  }
}
