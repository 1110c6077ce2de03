package dev.parapet.proxy.flow;

import dev.parapet.proxy.config.AdmissionConfig;
import io.netty.util.AsciiString;
import org.jspecify.annotations.Nullable;

/**
 * Where a request's admission class (1 critical .. 4 background) comes from: the route's {@code
 * priority}, unless the request carries an RFC 9218 {@code Priority} header. Only a peer in {@code
 * trusted_proxies} (another tier of ours) can: the header is removed from every other peer's
 * request before it is read, so a client on the internet cannot promote itself here or at the tier
 * behind.
 *
 * <p>RFC 9218 urgency runs 0 (most urgent) .. 7, default 3; it maps onto the four classes in pairs:
 * {@code u=0,1} → 1, {@code u=2,3} → 2, {@code u=4,5} → 3, {@code u=6,7} → 4. So an unmarked
 * request of a trusted tier (urgency 3) is ordinary traffic, and {@code u=7} (background, prefetch)
 * is shed first.
 */
final class Priorities {
  private final AsciiString header;

  Priorities(AdmissionConfig.Priority config) {
    this.header =
        AsciiString.cached(config.header()); // a token: the configuration reader checked it
  }

  /** The header the class is read from. */
  AsciiString header() {
    return header;
  }

  /**
   * The class for a request: the header's urgency when present (it is only when the peer is
   * trusted) and valid, else the route's.
   */
  int classOf(int routePriority, @Nullable String headerValue) {
    if (headerValue == null) {
      return routePriority;
    }
    int u = urgency(headerValue);
    return u < 0 ? routePriority : u / 2 + 1;
  }

  /**
   * The {@code u} member of an RFC 9218 Priority field (a structured-field dictionary), or -1 when
   * absent or malformed. Other members ({@code i}, unknown keys) are ignored, as RFC 9218 asks.
   */
  static int urgency(String value) {
    int n = value.length();
    int i = 0;
    while (i < n) {
      while (i < n
          && (value.charAt(i) == ' ' || value.charAt(i) == '\t' || value.charAt(i) == ',')) {
        i++;
      }
      int keyStart = i;
      while (i < n && value.charAt(i) != '=' && value.charAt(i) != ',' && value.charAt(i) != ';') {
        i++;
      }
      String key = value.substring(keyStart, i).trim();
      if (i < n && value.charAt(i) == '=' && key.equals("u")) {
        int j = i + 1;
        if (j < n && value.charAt(j) >= '0' && value.charAt(j) <= '7') {
          boolean ends = j + 1 >= n || ",; \t".indexOf(value.charAt(j + 1)) >= 0;
          return ends ? value.charAt(j) - '0' : -1;
        }
        return -1;
      }
      while (i < n && value.charAt(i) != ',') {
        i++;
      }
    }
    return -1;
  }
}
