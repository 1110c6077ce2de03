package dev.parapet.proxy.config;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * An address to listen on or connect to: {@code 127.0.0.1:8080}, {@code [::1]:8080} or {@code
 * origin.example.com:443}. The host is kept without brackets. Parsing never resolves names (no DNS
 * lookups while validating). Port 0 is accepted here (listen on an ephemeral port, as tests do);
 * origin hosts are checked for a real port by the loader.
 */
public record HostPort(String host, int port) {
  private static final Pattern HOSTNAME =
      Pattern.compile(
          "(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\\.?");
  private static final Pattern NUMERIC_DOTS = Pattern.compile("[0-9.]+");
  private static final String EXPECTED = "host:port like 127.0.0.1:8080, [::1]:8080 or name:443";

  public HostPort {
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("port : " + port + " (expected: in [0, 65535])");
    }
  }

  /**
   * Parses {@code text}.
   *
   * @throws IllegalArgumentException "must be host:port like ..., was '...'" or naming the bad part
   */
  public static HostPort parse(String text) {
    String s = text.trim();
    String host;
    String portText;
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0 || close + 1 >= s.length() || s.charAt(close + 1) != ':') {
        throw new IllegalArgumentException("must be " + EXPECTED + ", was '" + text + "'");
      }
      host = s.substring(1, close);
      portText = s.substring(close + 2);
      if (IpLiteral.parse(host) == null || host.indexOf(':') < 0) {
        throw new IllegalArgumentException(
            "must have a valid IPv6 address in brackets, was '" + text + "'");
      }
    } else {
      int colon = s.lastIndexOf(':');
      if (colon <= 0 || colon == s.length() - 1) {
        throw new IllegalArgumentException("must be " + EXPECTED + ", was '" + text + "'");
      }
      host = s.substring(0, colon);
      portText = s.substring(colon + 1);
      if (host.indexOf(':') >= 0) {
        throw new IllegalArgumentException(
            "must put an IPv6 address in brackets like [::1]:8080, was '" + text + "'");
      }
      host = host.toLowerCase(Locale.ROOT);
      if (NUMERIC_DOTS.matcher(host).matches()) {
        if (!IpLiteral.isIpv4(host)) {
          throw new IllegalArgumentException(
              "must have a valid IPv4 address, was '" + host + "' in '" + text + "'");
        }
      } else if (!HOSTNAME.matcher(host).matches()) {
        throw new IllegalArgumentException(
            "must have an IP address or a host name, was '" + host + "' in '" + text + "'");
      }
    }
    int port;
    try {
      port = Integer.parseInt(portText);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "must end in a port number, was '" + portText + "' in '" + text + "'");
    }
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("must have a port in [0, 65535], was " + port);
    }
    return new HostPort(host, port);
  }

  /** True when {@code host} is a DNS name (lower case, no port); IP addresses are not names. */
  static boolean isHostName(String host) {
    return HOSTNAME.matcher(host).matches() && !NUMERIC_DOTS.matcher(host).matches();
  }

  /** True for {@code localhost}, 127.0.0.0/8 and {@code ::1}: reachable from this machine only. */
  public boolean isLoopback() {
    if (host.equals("localhost")) {
      return true;
    }
    byte[] a = IpLiteral.parse(host);
    if (a == null) {
      return false;
    }
    if (a.length == 4) {
      return a[0] == 127;
    }
    for (int i = 0; i < 15; i++) {
      if (a[i] != 0) {
        return false;
      }
    }
    return a[15] == 1;
  }

  @Override
  public String toString() {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }
}
