package dev.parapet.sim.replay;

import dev.parapet.core.outcome.Outcome;

/**
 * nginx's default {@code combined} format:
 *
 * <pre>
 * $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"
 * </pre>
 *
 * optionally followed by {@code $request_time} (seconds, as the common {@code combined} + timing
 * variants append it). {@code $time_local} is written when the request ends, to the second; the
 * route is the request path's first {@code depth} segments. Without {@code $request_time} the
 * latency is unknown and taken as 0: failures by status still count, slow calls cannot. Status 499
 * (the client closed the connection) is no evidence.
 */
final class NginxLineParser extends LineParser {
  private static final String MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";
  private final int depth;

  NginxLineParser(RouteTable routes, int depth) {
    super(routes);
    this.depth = depth;
  }

  @Override
  boolean timeIsEnd() {
    return true;
  }

  @Override
  boolean parse(byte[] b, int from, int to) {
    if (blank(b, from, to)) {
      return false;
    }
    reset();
    int open = indexOf(b, from, to, (byte) '[');
    int close = open < 0 ? -1 : indexOf(b, open + 1, to, (byte) ']');
    if (close < 0) {
      throw Scan.bad("line", b, from, to, "nginx combined: [$time_local]");
    }
    time = timeLocal(b, open + 1, close);
    int q1 = indexOf(b, close + 1, to, (byte) '"');
    int q2 = q1 < 0 ? -1 : endQuote(b, q1 + 1, to);
    if (q2 < 0) {
      throw Scan.bad("line", b, from, to, "nginx combined: \"$request\"");
    }
    route = requestRoute(this, b, q1 + 1, q2, depth);
    int i = skipSpaces(b, q2 + 1, to);
    int sEnd = token(b, i, to);
    status = CsvLineParser.status(b, i, sEnd);
    if (status == 499) {
      outcome = outcome(Outcome.CLIENT_CANCELLED);
    }
    // body bytes, referer, user agent, then an optional $request_time
    i = token(b, skipSpaces(b, sEnd, to), to);
    for (int quoted = 0; quoted < 2; quoted++) {
      i = skipSpaces(b, i, to);
      if (i >= to || b[i] != '"') {
        return true;
      }
      int e = endQuote(b, i + 1, to);
      if (e < 0) {
        throw Scan.bad("line", b, from, to, "nginx combined: a closing quote");
      }
      i = e + 1;
    }
    i = skipSpaces(b, i, to);
    if (i < to && b[i] >= '0' && b[i] <= '9') {
      latencyNanos = Scan.decimal(b, i, token(b, i, to), Scan.NANOS_PER_SECOND, "request_time");
    }
    return true;
  }

  /** The route of {@code METHOD PATH PROTOCOL}; {@code -} when there is no path. */
  static int requestRoute(LineParser p, byte[] b, int from, int to, int depth) {
    int sp = indexOf(b, from, to, (byte) ' ');
    if (sp < 0) {
      return p.routeOfPath(b, to, to, depth); // no path: "-"
    }
    int pathFrom = sp + 1;
    int pathTo = indexOf(b, pathFrom, to, (byte) ' ');
    return p.routeOfPath(b, pathFrom, pathTo < 0 ? to : pathTo, depth);
  }

  /** {@code 10/Oct/2000:13:55:36 -0700}. */
  static long timeLocal(byte[] b, int from, int to) {
    if (to - from != 26 || b[from + 2] != '/' || b[from + 6] != '/' || b[from + 11] != ':') {
      throw Scan.bad("time_local", b, from, to, "dd/Mon/yyyy:HH:mm:ss +hhmm");
    }
    int day = (int) Scan.digits(b, from, from + 2, "time_local");
    int month = -1;
    for (int m = 0; m < 12; m++) {
      if (b[from + 3] == MONTHS.charAt(3 * m)
          && b[from + 4] == MONTHS.charAt(3 * m + 1)
          && b[from + 5] == MONTHS.charAt(3 * m + 2)) {
        month = m + 1;
      }
    }
    if (month < 0) {
      throw Scan.bad("time_local", b, from, to, "dd/Mon/yyyy:HH:mm:ss +hhmm");
    }
    int year = (int) Scan.digits(b, from + 7, from + 11, "time_local");
    int hour = (int) Scan.digits(b, from + 12, from + 14, "time_local");
    int minute = (int) Scan.digits(b, from + 15, from + 17, "time_local");
    int second = (int) Scan.digits(b, from + 18, from + 20, "time_local");
    long offset = Scan.offset(b, from + 21, to, from);
    return (Scan.instant(year, month, day, hour, minute, second, b, from, to) - offset)
        * Scan.NANOS_PER_SECOND;
  }

  static int token(byte[] b, int i, int to) {
    while (i < to && b[i] != ' ') {
      i++;
    }
    return i;
  }

  /** The closing quote from {@code i}; a backslash escapes the next byte. */
  static int endQuote(byte[] b, int i, int to) {
    while (i < to) {
      if (b[i] == '\\') {
        i += 2;
        continue;
      }
      if (b[i] == '"') {
        return i;
      }
      i++;
    }
    return -1;
  }
}
