package dev.parapet.proxy.server;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Header rules at a hop (RFC 9110 §7.6.1): connection-specific fields — the fixed hop-by-hop set
 * and every field named in {@code Connection} — are removed before forwarding in either direction;
 * {@code Via} gets this hop appended.
 */
final class ForwardedHeaders {
  private static final Set<String> HOP_BY_HOP =
      Set.of(
          "connection",
          "keep-alive",
          "proxy-connection",
          "te",
          "trailer",
          "transfer-encoding",
          "upgrade",
          "proxy-authorization",
          "proxy-authenticate");

  private ForwardedHeaders() {}

  /** Removes hop-by-hop fields and the fields {@code Connection} names. */
  static void stripHopByHop(HttpHeaders h) {
    List<String> named = new ArrayList<>();
    for (String value : h.getAll(HttpHeaderNames.CONNECTION)) {
      for (String token : value.split(",")) {
        String t = token.trim().toLowerCase(Locale.ROOT);
        if (!t.isEmpty()) {
          named.add(t);
        }
      }
    }
    for (String n : HOP_BY_HOP) {
      h.remove(n);
    }
    for (String n : named) {
      // Never let a client strip end-to-end fields the proxy depends on through Connection.
      if (!n.equals("host") && !n.equals("content-length")) {
        h.remove(n);
      }
    }
  }

  /** Appends {@code 1.1 name} to Via. */
  static void appendVia(HttpHeaders h, String name) {
    String via = h.get(HttpHeaderNames.VIA);
    h.set(
        HttpHeaderNames.VIA, via == null || via.isBlank() ? "1.1 " + name : via + ", 1.1 " + name);
  }

  /** True when {@code name} already appears as a received-by in Via: the request looped. */
  static boolean viaContains(HttpHeaders h, String name) {
    for (String via : h.getAll(HttpHeaderNames.VIA)) {
      for (String hop : via.split(",")) {
        String[] parts = hop.trim().split("\\s+");
        if (parts.length >= 2 && parts[1].equalsIgnoreCase(name)) {
          return true;
        }
      }
    }
    return false;
  }
}
