package dev.parapet.proxy.admin;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Decides whether the admin API answers a request at all, before any endpoint runs. The listener
 * sits on loopback, where any web page the operator opens can make the browser send it requests;
 * three checks, in this order, keep such a page from reading or changing anything:
 *
 * <ol>
 *   <li><b>{@code Host} names this listener</b>, against DNS rebinding: a page on {@code
 *       attacker.example} whose name is then re-pointed at 127.0.0.1 is same-origin with the admin
 *       API in the browser's eyes, so the browser lets the page read every answer, but its requests
 *       still say {@code Host: attacker.example}. Accepted: {@code localhost}, 127.0.0.1, ::1, the
 *       listen address (the name it was given, and its IP address) and {@link AdminAccess#hosts};
 *       on a wildcard listener (0.0.0.0, ::) any IP address, since every local address reaches it
 *       and a rebinding attack needs a name. The port is not compared: a tunnel ({@code ssh -L
 *       19901:127.0.0.1:9901}) changes it, and a page cannot change its name through the port. Any
 *       other name is 421 Misdirected Request (RFC 9110 §15.5.20: this server will not answer for
 *       that name); a missing, repeated or malformed {@code Host} on HTTP/1.1 is 400, as RFC 9112
 *       §3.2 requires.
 *   <li><b>A change comes from the listener's own origin</b>, against cross-site writes: browsers
 *       send {@code Origin} with every POST and DELETE, and a change (any method but GET and HEAD)
 *       whose {@code Origin} is not {@code http(s)://} plus the request's own host and port is 403.
 *       Tools such as curl send no {@code Origin} and are not affected. The API sends no CORS
 *       headers, so no other origin may read its answers either.
 *   <li><b>The bearer token</b>, compared in constant time: for every change; for every read too
 *       when {@link AdminAccess#tokenForReads} or off loopback; never for {@code GET /healthz} and
 *       {@code GET /readyz}, so liveness and readiness probes need no secret. 401 with {@code
 *       WWW-Authenticate: Bearer}.
 * </ol>
 *
 * <p>Hand-written rather than taken from a library: Netty has no such filter, and the checks are a
 * few comparisons; parsing the {@code Host} and {@code Origin} authorities is left to {@link URI},
 * IP literals to Netty's {@link NetUtil} (neither ever resolves a name).
 */
final class AdminGate {
  /** Why a request is refused; the admin server writes it as {@code application/problem+json}. */
  record Refusal(HttpResponseStatus status, String type, String detail) {}

  private static final Set<String> PROBES = Set.of("/healthz", "/readyz");

  private final byte @Nullable [] token;
  private final boolean tokenForReads;
  private final Set<String> names = new HashSet<>();
  private final Set<InetAddress> addresses = new HashSet<>();
  private final boolean anyAddress;

  /**
   * @throws IllegalArgumentException for an entry of {@link AdminAccess#hosts} that is not a host
   *     name or IP address without a port
   */
  AdminGate(InetSocketAddress listen, AdminAccess access) {
    String t = access.token();
    this.token = t == null || t.isBlank() ? null : t.trim().getBytes(StandardCharsets.UTF_8);
    InetAddress bound = listen.getAddress();
    boolean loopback = bound != null && bound.isLoopbackAddress();
    this.tokenForReads = access.tokenForReads() || !loopback;
    this.anyAddress = bound != null && bound.isAnyLocalAddress();
    names.add("localhost");
    addresses.add(literal("127.0.0.1"));
    addresses.add(literal("::1"));
    if (bound != null && !anyAddress) {
      addresses.add(canonical(bound));
    }
    String listenName = Authority.name(listen.getHostString());
    if (NetUtil.createInetAddressFromIpAddressString(listenName) == null) {
      names.add(listenName);
    }
    for (String h : access.hosts()) {
      Authority a = Authority.parse(h.indexOf(':') >= 0 && !h.startsWith("[") ? "[" + h + "]" : h);
      if (a == null || a.port() >= 0) {
        throw new IllegalArgumentException(
            "admin.hosts : '" + h + "' (expected: a host name or IP address without a port)");
      }
      InetAddress ip = NetUtil.createInetAddressFromIpAddressString(a.host());
      if (ip != null) {
        addresses.add(canonical(ip));
      } else {
        names.add(a.host());
      }
    }
  }

  /** Null when the request may go on to its endpoint, else why not. */
  @Nullable Refusal check(HttpRequest req, String path) {
    List<String> hosts = req.headers().getAll(HttpHeaderNames.HOST);
    Authority host = null;
    if (hosts.size() > 1) {
      return badHost(hosts.size() + " fields (expected: one)");
    } else if (hosts.isEmpty()) {
      if (!req.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
        return badHost("missing (expected: one Host field on HTTP/1.1)");
      }
    } else {
      host = Authority.parse(hosts.get(0));
      if (host == null) {
        return badHost("'" + hosts.get(0) + "' (expected: host or host:port)");
      }
      if (!accepts(host.host())) {
        return new Refusal(
            HttpResponseStatus.MISDIRECTED_REQUEST,
            "admin-misdirected",
            "Host : "
                + hosts.get(0)
                + " (expected: a name of this admin listener; others are added with admin.hosts)");
      }
    }
    boolean change = !req.method().equals(HttpMethod.GET) && !req.method().equals(HttpMethod.HEAD);
    if (change) {
      Refusal cross = crossOrigin(req, host);
      if (cross != null) {
        return cross;
      }
    }
    if ((change || (tokenForReads && !PROBES.contains(path))) && !authorized(req)) {
      return new Refusal(
          HttpResponseStatus.UNAUTHORIZED,
          "admin-unauthorized",
          token == null
              ? "changes are disabled: admin.token_file is not configured"
              : "missing or wrong bearer token");
    }
    return null;
  }

  private boolean accepts(String host) {
    if (names.contains(host)) {
      return true;
    }
    InetAddress ip = NetUtil.createInetAddressFromIpAddressString(host);
    return ip != null && (anyAddress || addresses.contains(canonical(ip)));
  }

  /** A change with an {@code Origin} other than the request's own host and port. */
  private @Nullable Refusal crossOrigin(HttpRequest req, @Nullable Authority host) {
    List<String> origins = req.headers().getAll(HttpHeaderNames.ORIGIN);
    if (origins.isEmpty()) {
      return null;
    }
    String origin = origins.get(0);
    if (origins.size() == 1 && host != null) {
      try {
        URI u = new URI(origin);
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
        int defaultPort = scheme.equals("https") ? 443 : 80;
        Authority from = Authority.of(u);
        if ((scheme.equals("http") || scheme.equals("https"))
            && from != null
            && from.host().equals(host.host())
            && (from.port() < 0 ? defaultPort : from.port())
                == (host.port() < 0 ? defaultPort : host.port())) {
          return null;
        }
      } catch (URISyntaxException e) {
        // refused below, like any other origin
      }
    }
    return new Refusal(
        HttpResponseStatus.FORBIDDEN,
        "admin-cross-origin",
        "Origin : "
            + String.join(", ", origins)
            + " (expected: none, or this listener's own origin"
            + (host == null ? "" : " http://" + host)
            + "; changes from other web pages are refused)");
  }

  private boolean authorized(HttpRequest req) {
    byte[] expected = token;
    if (expected == null) {
      return false;
    }
    String h = req.headers().get(HttpHeaderNames.AUTHORIZATION);
    if (h == null || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return false;
    }
    byte[] given = h.substring(7).trim().getBytes(StandardCharsets.UTF_8);
    return MessageDigest.isEqual(expected, given);
  }

  private static Refusal badHost(String found) {
    return new Refusal(HttpResponseStatus.BAD_REQUEST, "admin-bad-host", "Host : " + found);
  }

  private static InetAddress literal(String ip) {
    InetAddress a = NetUtil.createInetAddressFromIpAddressString(ip);
    if (a == null) {
      throw new IllegalArgumentException("ip : " + ip + " (expected: an IP address)");
    }
    return canonical(a);
  }

  /** An IPv4-mapped IPv6 address (::ffff:127.0.0.1) as the IPv4 address it is. */
  private static InetAddress canonical(InetAddress a) {
    try {
      return InetAddress.getByAddress(a.getAddress());
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("address : " + a + " (expected: 4 or 16 bytes)", e);
    }
  }

  /**
   * A {@code Host} field or an {@code Origin}'s authority: the host lower-case, without brackets or
   * a final dot; the port, or -1 when none is written.
   */
  record Authority(String host, int port) {
    static @Nullable Authority parse(String text) {
      try {
        return of(new URI("//" + text.trim()));
      } catch (URISyntaxException e) {
        return null;
      }
    }

    /** Null unless {@code u} is a bare authority: a host, a port, nothing else. */
    static @Nullable Authority of(URI u) {
      String h = u.getHost();
      String path = u.getRawPath();
      if (h == null
          || u.getRawUserInfo() != null
          || (path != null && !path.isEmpty())
          || u.getRawQuery() != null
          || u.getRawFragment() != null
          || u.getPort() > 65_535) {
        return null;
      }
      return new Authority(name(h), u.getPort());
    }

    static String name(String host) {
      String h = host.toLowerCase(Locale.ROOT);
      if (h.startsWith("[") && h.endsWith("]")) {
        h = h.substring(1, h.length() - 1);
      }
      return h.endsWith(".") ? h.substring(0, h.length() - 1) : h;
    }

    @Override
    public String toString() {
      String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
      return port < 0 ? h : h + ":" + port;
    }
  }
}
