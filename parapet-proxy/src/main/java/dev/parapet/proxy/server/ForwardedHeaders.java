package dev.parapet.proxy.server;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Header rules at a hop (RFC 9110 §7.6.1): connection-specific fields — the fixed hop-by-hop set
 * and every field named in {@code Connection} — are removed before forwarding in either direction;
 * {@code Via} gets this hop appended.
 */
final class ForwardedHeaders {
  // AsciiString constants: their hash is computed once, not on every request's removal.
  private static final AsciiString[] HOP_BY_HOP = {
    HttpHeaderNames.CONNECTION,
    HttpHeaderNames.KEEP_ALIVE,
    AsciiString.cached("proxy-connection"),
    HttpHeaderNames.TE,
    HttpHeaderNames.TRAILER,
    HttpHeaderNames.TRANSFER_ENCODING,
    HttpHeaderNames.UPGRADE,
    HttpHeaderNames.PROXY_AUTHORIZATION,
    HttpHeaderNames.PROXY_AUTHENTICATE
  };

  private ForwardedHeaders() {}

  /** Removes hop-by-hop fields and the fields {@code Connection} names. */
  static void stripHopByHop(HttpHeaders h) {
    List<String> named = List.of();
    if (h.contains(HttpHeaderNames.CONNECTION)) {
      named = new ArrayList<>();
      for (String value : h.getAll(HttpHeaderNames.CONNECTION)) {
        for (String token : value.split(",")) {
          String t = token.trim().toLowerCase(Locale.ROOT);
          if (!t.isEmpty()) {
            named.add(t);
          }
        }
      }
    }
    for (AsciiString n : HOP_BY_HOP) {
      h.remove(n);
    }
    for (String n : named) {
      // Never let a client strip end-to-end fields the proxy depends on through Connection.
      if (!n.equals("host") && !n.equals("content-length")) {
        h.remove(n);
      }
    }
  }

  /** This hop's {@code Via} member for a proxy called {@code name}: {@code 1.1 name}. */
  static String viaMember(String name) {
    return "1.1 " + name;
  }

  /** Appends this hop's {@code member} (see {@link #viaMember}) to Via. */
  static void appendVia(HttpHeaders h, String member) {
    String via = h.get(HttpHeaderNames.VIA);
    h.set(HttpHeaderNames.VIA, via == null || via.isBlank() ? member : via + ", " + member);
  }

  /** True when {@code name} already appears as a received-by in Via: the request looped. */
  static boolean viaContains(HttpHeaders h, String name) {
    if (!h.contains(HttpHeaderNames.VIA)) {
      return false; // the common case at an edge: no regex, no list
    }
    for (String via : h.getAll(HttpHeaderNames.VIA)) {
      int i = 0;
      int n = via.length();
      while (i < n) {
        int end = via.indexOf(',', i);
        if (end < 0) {
          end = n;
        }
        if (receivedByIs(via, i, end, name)) {
          return true;
        }
        i = end + 1;
      }
    }
    return false;
  }

  /**
   * Whether the Via member in {@code via[from, to)} ({@code protocol received-by [comment]}) names
   * {@code name}.
   */
  private static boolean receivedByIs(String via, int from, int to, String name) {
    int i = from;
    while (i < to && Character.isWhitespace(via.charAt(i))) {
      i++;
    }
    while (i < to && !Character.isWhitespace(via.charAt(i))) {
      i++; // the protocol
    }
    while (i < to && Character.isWhitespace(via.charAt(i))) {
      i++;
    }
    int start = i;
    while (i < to && !Character.isWhitespace(via.charAt(i))) {
      i++; // received-by
    }
    return i - start == name.length() && via.regionMatches(true, start, name, 0, name.length());
  }
}
