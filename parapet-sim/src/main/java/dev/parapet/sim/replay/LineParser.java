package dev.parapet.sim.replay;

import dev.parapet.core.outcome.Outcome;

/**
 * Reads one line of one access-log format into its fields, in place. A parser keeps the last line's
 * fields itself (no record object per line) and throws a {@link BadLineException} naming the field
 * for a line it cannot read.
 */
abstract class LineParser {
  static final byte BY_STATUS = -1;

  /** The time as written, epoch nanoseconds: the start, or the end when {@link #timeIsEnd}. */
  long time;

  long latencyNanos;
  int status;
  int route;

  /** An outcome the line states outright (a timeout flag, a refused connection), or BY_STATUS. */
  byte outcome = BY_STATUS;

  final RouteTable routes;

  LineParser(RouteTable routes) {
    this.routes = routes;
  }

  /**
   * Reads {@code b[from, to)}.
   *
   * @return false for a line that carries no record (a header, a comment)
   */
  abstract boolean parse(byte[] b, int from, int to);

  /** True when the format's time is written when the request ended (nginx, Parapet's log). */
  abstract boolean timeIsEnd();

  final void reset() {
    outcome = BY_STATUS;
    latencyNanos = 0;
  }

  static byte outcome(Outcome o) {
    return (byte) o.ordinal();
  }

  static boolean blank(byte[] b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (b[i] != ' ' && b[i] != '\t') {
        return b[i] == '#';
      }
    }
    return true;
  }

  static int skipSpaces(byte[] b, int i, int to) {
    while (i < to && (b[i] == ' ' || b[i] == '\t')) {
      i++;
    }
    return i;
  }

  static int indexOf(byte[] b, int from, int to, byte c) {
    for (int i = from; i < to; i++) {
      if (b[i] == c) {
        return i;
      }
    }
    return -1;
  }

  /**
   * The route of a request path: its first {@code depth} segments without the query ({@code
   * /api/users/7?x=1} is {@code /api} at depth 1); the path itself when shorter. An absolute-form
   * target ({@code http://host/api/...}) is read from its path; anything else that is no path (a
   * TLS handshake sent to a plain-text port, {@code *}) is the route {@code -}, so garbage cannot
   * fill the route table.
   */
  final int routeOfPath(byte[] b, int from, int to, int depth) {
    if (from < to && b[from] != '/') {
      int scheme = indexOf(b, from, to, (byte) ':');
      if (scheme > from && scheme + 2 < to && b[scheme + 1] == '/' && b[scheme + 2] == '/') {
        int path = indexOf(b, scheme + 3, to, (byte) '/');
        from = path < 0 ? to : path;
      }
    }
    if (from >= to || b[from] != '/') {
      return routes.id(NO_PATH, 0, 1);
    }
    int seen = 0;
    for (int i = from + 1; i < to; i++) {
      byte c = b[i];
      if (c == '?' || c == '#') {
        return routes.id(b, from, i);
      }
      if (c == '/' && ++seen == depth) {
        return routes.id(b, from, i);
      }
    }
    return routes.id(b, from, to);
  }

  private static final byte[] NO_PATH = {'-'};
}
