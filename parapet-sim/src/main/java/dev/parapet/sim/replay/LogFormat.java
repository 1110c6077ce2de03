package dev.parapet.sim.replay;

import java.util.Locale;

/** The access-log formats a replay reads. */
public enum LogFormat {
  /** Recognised per file from its first line. */
  AUTO,
  /** {@code time,route,status,latency_ms} with a header; time is the start. */
  CSV,
  /** Parapet's own access log, JSON lines; time is the end. */
  JSON,
  /** nginx {@code combined}, optionally followed by {@code $request_time}; time is the end. */
  NGINX,
  /** Envoy's default format; time is the start. */
  ENVOY;

  public static LogFormat parse(String s) {
    try {
      return valueOf(s.strip().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "--format : " + s + " (expected: auto, csv, json, nginx or envoy)", e);
    }
  }

  /** The format of a file whose first non-blank line is {@code b[from, to)}. */
  static LogFormat detect(byte[] b, int from, int to) {
    int i = LineParser.skipSpaces(b, from, to);
    if (i < to && b[i] == '{') {
      return JSON;
    }
    if (i < to && b[i] == '[') {
      return ENVOY;
    }
    int bracket = LineParser.indexOf(b, i, to, (byte) '[');
    int quote = LineParser.indexOf(b, i, to, (byte) '"');
    if (bracket > 0 && quote > bracket) {
      return NGINX;
    }
    return CSV;
  }

  LineParser parser(RouteTable routes, int routeDepth) {
    return switch (this) {
      case CSV -> new CsvLineParser(routes);
      case JSON -> new JsonLineParser(routes);
      case NGINX -> new NginxLineParser(routes, routeDepth);
      case ENVOY -> new EnvoyLineParser(routes, routeDepth);
      case AUTO -> throw new IllegalStateException("format : auto (expected: detected first)");
    };
  }
}
