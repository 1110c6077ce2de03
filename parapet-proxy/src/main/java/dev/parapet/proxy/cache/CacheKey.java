package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.HttpMethod;
import java.util.Locale;

/**
 * The primary cache key (RFC 9111 §4.1, §2): the target URI — host and the origin-form path and
 * query. The method is not part of it because only GET responses are stored and a HEAD request is
 * answered from the GET entry (RFC 9110 §9.3.2: HEAD is GET without the content). The secondary
 * key, from {@code Vary}, is {@link VaryKey}'s.
 *
 * <p>The scheme is part of the key: {@code http://h/x} and {@code https://h/x} are two entries. The
 * origin sees which one the client used ({@code X-Forwarded-Proto}) and may answer differently — a
 * redirect to https, absolute links — so a response fetched for one is never served for the other.
 * A purge by URL or prefix removes both ({@link Purge}).
 *
 * <p>Normalization (RFC 9110 §4.2.3): the host is lower-cased and loses the scheme's default port
 * (80 for http, 443 for https) and a trailing dot; the target is kept byte for byte (no
 * percent-decoding, no query reordering) because two spellings an origin might tell apart must
 * never share an entry; an empty path is {@code /}.
 *
 * @param host the normalized host, possibly with a non-default port
 * @param target path and query in origin-form, e.g. {@code /a/b?x=1}
 * @param secure true for an https request
 */
public record CacheKey(String host, String target, boolean secure) {

  /** The key of an http request (already normalized). */
  public CacheKey(String host, String target) {
    this(host, target, false);
  }

  /**
   * The key of a request.
   *
   * @param hostHeader the request's Host (or the authority of an absolute-form target)
   * @param target the origin-form target ({@code /path?query})
   */
  public static CacheKey of(String hostHeader, String target) {
    return of(hostHeader, target, false);
  }

  /** The key of a request that came over http or, when {@code secure}, over https. */
  public static CacheKey of(String hostHeader, String target, boolean secure) {
    return new CacheKey(normalizeHost(hostHeader, secure), target.isEmpty() ? "/" : target, secure);
  }

  /** True for methods whose responses may be served from this cache: GET and HEAD. */
  public static boolean isLookupMethod(HttpMethod method) {
    return method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD);
  }

  /**
   * True for methods that invalidate the target on a non-error response (RFC 9111 §4.4): every
   * method not known to be safe. Safe: GET, HEAD, OPTIONS, TRACE (RFC 9110 §9.2.1).
   */
  public static boolean isUnsafe(HttpMethod method) {
    return !(method.equals(HttpMethod.GET)
        || method.equals(HttpMethod.HEAD)
        || method.equals(HttpMethod.OPTIONS)
        || method.equals(HttpMethod.TRACE));
  }

  static String normalizeHost(String host) {
    return normalizeHost(host, false);
  }

  static String normalizeHost(String host, boolean secure) {
    String h = host.trim().toLowerCase(Locale.ROOT);
    String defaultPort = secure ? ":443" : ":80";
    if (h.endsWith(defaultPort)) {
      h = h.substring(0, h.length() - defaultPort.length());
    }
    if (h.endsWith(".")) {
      h = h.substring(0, h.length() - 1);
    }
    return h;
  }

  @Override
  public String toString() {
    return secure ? "https://" + host + target : host + target;
  }
}
