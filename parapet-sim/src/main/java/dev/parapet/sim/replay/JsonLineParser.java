package dev.parapet.sim.replay;

import dev.parapet.core.outcome.Outcome;
import java.nio.charset.StandardCharsets;

/**
 * The JSON lines Parapet's access log writes: one flat object per line with {@code time} (epoch
 * seconds, or an ISO-8601 string), {@code route}, {@code status}, {@code latency_ms} ({@code
 * latency} is accepted too) and, when the proxy answered itself, {@code error}. Other keys are
 * skipped. Parapet writes a line when the request ends, so {@code time} is the end and the start is
 * {@code time - latency_ms}.
 *
 * <p>The {@code error} names what the status alone cannot: {@code RESPONSE_TIMEOUT} is a timeout,
 * {@code CONNECTION_REFUSED} and {@code CONNECT_TIMEOUT} are connect failures (the breaker's fast
 * trip), and the proxy's own refusals ({@code BREAKER_OPEN}, {@code SHED}, {@code CLIENT_LIMIT},
 * {@code CONNECTION_LIMIT}, {@code DEADLINE_TOO_SHORT}) never reached the origin and are no
 * evidence. Status 499 (the client left first) is no evidence either.
 */
final class JsonLineParser extends LineParser {
  private static final byte[] TIME = bytes("time");
  private static final byte[] ROUTE = bytes("route");
  private static final byte[] STATUS = bytes("status");
  private static final byte[] LATENCY_MS = bytes("latency_ms");
  private static final byte[] LATENCY = bytes("latency");
  private static final byte[] ERROR = bytes("error");
  private static final byte[][] TIMEOUTS = {bytes("RESPONSE_TIMEOUT")};
  private static final byte[][] CONNECT = {bytes("CONNECTION_REFUSED"), bytes("CONNECT_TIMEOUT")};
  private static final byte[][] LOCAL = {
    bytes("BREAKER_OPEN"),
    bytes("SHED"),
    bytes("CLIENT_LIMIT"),
    bytes("CONNECTION_LIMIT"),
    bytes("DEADLINE_TOO_SHORT")
  };

  private byte[] scratch = new byte[256];
  private int valueFrom;
  private int valueTo;
  private boolean valueEscaped;

  JsonLineParser(RouteTable routes) {
    super(routes);
  }

  @Override
  boolean timeIsEnd() {
    return true;
  }

  @Override
  boolean parse(byte[] b, int from, int to) {
    int i = skipSpaces(b, from, to);
    if (i == to || b[i] == '#') {
      return false;
    }
    if (b[i] != '{') {
      throw Scan.bad("line", b, from, to, "a JSON object");
    }
    reset();
    int found = 0;
    boolean errorSeen = false;
    i = skipSpaces(b, i + 1, to);
    while (i < to && b[i] != '}') {
      if (b[i] != '"') {
        throw Scan.bad("line", b, from, to, "a flat JSON object with quoted keys");
      }
      int keyFrom = i + 1;
      int keyTo = indexOf(b, keyFrom, to, (byte) '"');
      if (keyTo < 0) {
        throw Scan.bad("line", b, from, to, "a closing quote");
      }
      i = skipSpaces(b, keyTo + 1, to);
      if (i >= to || b[i] != ':') {
        throw Scan.bad("line", b, from, to, "':' after a key");
      }
      i = value(b, skipSpaces(b, i + 1, to), to, from);
      int vf = valueFrom;
      int vt = valueTo;
      switch (key(b, keyFrom, keyTo)) {
        case 1 -> {
          time = Scan.time(b, vf, vt);
          found |= 1;
        }
        case 2 -> {
          route = valueEscaped ? unescapedRoute(b, vf, vt) : routes.id(b, vf, vt);
          found |= 2;
        }
        case 3 -> {
          status = CsvLineParser.status(b, vf, vt);
          found |= 4;
        }
        case 4 -> {
          latencyNanos = Scan.decimal(b, vf, vt, 1_000_000L, "latency_ms");
          found |= 8;
        }
        case 5 -> {
          errorSeen = true;
          error(b, vf, vt);
        }
        default -> {}
      }
      i = skipSpaces(b, i, to);
      if (i < to && b[i] == ',') {
        i = skipSpaces(b, i + 1, to);
      }
    }
    if (found != 15) {
      String missing =
          (found & 1) == 0
              ? "time"
              : (found & 2) == 0 ? "route" : (found & 4) == 0 ? "status" : "latency_ms";
      throw new BadLineException(missing + " : missing (expected: a value)");
    }
    if (!errorSeen && status == 499) {
      outcome = outcome(Outcome.CLIENT_CANCELLED);
    }
    return true;
  }

  /** 1 time, 2 route, 3 status, 4 latency, 5 error, 0 any other key: by length first. */
  private static int key(byte[] b, int from, int to) {
    return switch (to - from) {
      case 4 -> is(b, from, to, TIME) ? 1 : 0;
      case 5 -> is(b, from, to, ROUTE) ? 2 : is(b, from, to, ERROR) ? 5 : 0;
      case 6 -> is(b, from, to, STATUS) ? 3 : 0;
      case 7 -> is(b, from, to, LATENCY) ? 4 : 0;
      case 10 -> is(b, from, to, LATENCY_MS) ? 4 : 0;
      default -> 0;
    };
  }

  private void error(byte[] b, int from, int to) {
    if (any(b, from, to, TIMEOUTS)) {
      outcome = outcome(Outcome.TIMEOUT);
    } else if (any(b, from, to, CONNECT)) {
      outcome = outcome(Outcome.CONNECT_FAILURE);
    } else if (any(b, from, to, LOCAL)) {
      outcome = outcome(Outcome.LOCAL_REJECTION);
    }
  }

  /** Reads the value at {@code i} into valueFrom/valueTo (a string without its quotes). */
  private int value(byte[] b, int i, int to, int lineFrom) {
    valueEscaped = false;
    if (i < to && b[i] == '"') {
      int j = i + 1;
      while (j < to && b[j] != '"') {
        if (b[j] == '\\') {
          valueEscaped = true;
          j++;
        }
        j++;
      }
      if (j >= to) {
        throw Scan.bad("line", b, lineFrom, to, "a closing quote");
      }
      valueFrom = i + 1;
      valueTo = j;
      return j + 1;
    }
    int j = i;
    while (j < to && b[j] != ',' && b[j] != '}' && b[j] != ' ') {
      if (b[j] == '{' || b[j] == '[') {
        throw Scan.bad("line", b, lineFrom, to, "a flat JSON object");
      }
      j++;
    }
    valueFrom = i;
    valueTo = j;
    return j;
  }

  private int unescapedRoute(byte[] b, int from, int to) {
    if (scratch.length < to - from) {
      scratch = new byte[to - from];
    }
    int n = 0;
    for (int i = from; i < to; i++) {
      byte c = b[i];
      if (c == '\\' && i + 1 < to) {
        byte e = b[++i];
        if (e == 'u' && i + 4 < to) {
          int cp = Integer.parseInt(Scan.text(b, i + 1, i + 5), 16);
          byte[] utf8 = String.valueOf((char) cp).getBytes(StandardCharsets.UTF_8);
          if (scratch.length < n + utf8.length + (to - i)) {
            scratch = java.util.Arrays.copyOf(scratch, n + utf8.length + (to - i));
          }
          System.arraycopy(utf8, 0, scratch, n, utf8.length);
          n += utf8.length;
          i += 4;
          continue;
        }
        c =
            switch (e) {
              case 'n' -> '\n';
              case 't' -> '\t';
              case 'r' -> '\r';
              case 'b' -> '\b';
              case 'f' -> '\f';
              default -> e;
            };
      }
      scratch[n++] = c;
    }
    return routes.id(scratch, 0, n);
  }

  private static boolean is(byte[] b, int from, int to, byte[] key) {
    if (to - from != key.length) {
      return false;
    }
    for (int i = 0; i < key.length; i++) {
      if (b[from + i] != key[i]) {
        return false;
      }
    }
    return true;
  }

  private static boolean any(byte[] b, int from, int to, byte[][] names) {
    for (byte[] n : names) {
      if (is(b, from, to, n)) {
        return true;
      }
    }
    return false;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
