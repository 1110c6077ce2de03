package dev.parapet.sim.replay;

import dev.parapet.core.outcome.Outcome;

/**
 * Envoy's default access-log format:
 *
 * <pre>
 * [%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%"
 * %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% ...
 * </pre>
 *
 * The time is the request's start (ISO-8601 with milliseconds), the latency {@code %DURATION%} in
 * milliseconds, the route the path's first {@code depth} segments. Response flags name what the
 * code alone cannot: {@code UT} is a timeout, {@code UF} a connect failure, {@code DC} or a code of
 * 0 without those flags a client that went away (no evidence), {@code UO} / {@code RL} / {@code NR}
 * Envoy's own refusals (no evidence).
 */
final class EnvoyLineParser extends LineParser {
  private final int depth;

  EnvoyLineParser(RouteTable routes, int depth) {
    super(routes);
    this.depth = depth;
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
    reset();
    int i = skipSpaces(b, from, to);
    int close = i < to && b[i] == '[' ? LineParser.indexOf(b, i + 1, to, (byte) ']') : -1;
    if (close < 0) {
      throw Scan.bad("line", b, from, to, "envoy: [%START_TIME%]");
    }
    time = Scan.iso(b, i + 1, close);
    int q1 = indexOf(b, close + 1, to, (byte) '"');
    int q2 = q1 < 0 ? -1 : NginxLineParser.endQuote(b, q1 + 1, to);
    if (q2 < 0) {
      throw Scan.bad("line", b, from, to, "envoy: \"%METHOD% %PATH% %PROTOCOL%\"");
    }
    route = NginxLineParser.requestRoute(this, b, q1 + 1, q2, depth);
    i = skipSpaces(b, q2 + 1, to);
    int e = NginxLineParser.token(b, i, to);
    status = CsvLineParser.status(b, i, e);
    i = skipSpaces(b, e, to);
    int flagsEnd = NginxLineParser.token(b, i, to);
    flags(b, i, flagsEnd);
    i = skipSpaces(b, flagsEnd, to); // bytes received
    i = skipSpaces(b, NginxLineParser.token(b, i, to), to); // bytes sent
    i = skipSpaces(b, NginxLineParser.token(b, i, to), to); // duration
    e = NginxLineParser.token(b, i, to);
    if (e - i == 1 && b[i] == '-') {
      latencyNanos = 0;
    } else {
      latencyNanos = Scan.decimal(b, i, e, 1_000_000L, "duration");
    }
    return true;
  }

  private void flags(byte[] b, int from, int to) {
    boolean clientGone = status == 0;
    for (int i = from; i + 1 < to; i += 3) {
      byte x = b[i];
      byte y = b[i + 1];
      if (x == 'U' && y == 'T') {
        outcome = outcome(Outcome.TIMEOUT);
        return;
      }
      if (x == 'U' && y == 'F') {
        outcome = outcome(Outcome.CONNECT_FAILURE);
        return;
      }
      if ((x == 'U' && y == 'O') || (x == 'R' && y == 'L') || (x == 'N' && y == 'R')) {
        outcome = outcome(Outcome.LOCAL_REJECTION);
        return;
      }
      if (x == 'D' && y == 'C') {
        clientGone = true;
      }
    }
    if (clientGone) {
      outcome = outcome(Outcome.CLIENT_CANCELLED);
    }
  }
}
