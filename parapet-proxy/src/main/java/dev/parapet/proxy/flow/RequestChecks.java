package dev.parapet.proxy.flow;

import dev.parapet.proxy.http.ForwardedHeaders;
import dev.parapet.proxy.http.ProxyError;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Iterator;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a request head must satisfy before anything is done with it, beyond what the decoder already
 * refused (smuggling, bad framing, oversized heads): no CONNECT (Parapet is a reverse proxy), a
 * bounded number of fields, exactly one Host on HTTP/1.1 and a valid one whenever it is there (RFC
 * 9112 §3.2: {@code uri-host [":" port]}, so {@code x y}, {@code x/evil}, {@code x@evil} and an
 * empty Host are refused; they would route, key the cache and reach the origin differently).
 */
final class RequestChecks {
  /** Why a request is answered here without being routed: the error and its detail. */
  record Refusal(ProxyError error, String detail) {}

  /**
   * A request the codec could not frame, one whose head breaks the rules ({@link #problem}), one
   * that came back to this proxy (its name already in {@code Via}), or one whose Content-Length is
   * over the body limit; null for any other.
   */
  static @Nullable Refusal refusal(HttpRequest request, ProxySettings settings) {
    if (request.decoderResult().isFailure()) {
      return new Refusal(ProxyError.BAD_REQUEST, describe(request.decoderResult().cause()));
    }
    String invalid = problem(request, settings.maxHeaderFields());
    if (invalid != null) {
      return new Refusal(ProxyError.BAD_REQUEST, invalid);
    }
    if (ForwardedHeaders.viaContains(request.headers(), settings.name())) {
      return new Refusal(ProxyError.LOOP_DETECTED, "this proxy is already in Via");
    }
    long declared = HttpUtil.getContentLength(request, -1L);
    if (declared > settings.maxBodyBytes()) {
      return new Refusal(
          ProxyError.BODY_TOO_LARGE,
          "Content-Length " + declared + " (expected: <= " + settings.maxBodyBytes() + ")");
    }
    return null;
  }

  /**
   * An absolute-form request target (RFC 9112 §3.2.2) that names an http or https authority without
   * user info and a path, or null when {@code target} is not one.
   */
  static @Nullable URI absoluteForm(String target) {
    URI u;
    try {
      u = new URI(target);
    } catch (URISyntaxException e) {
      return null;
    }
    String scheme = u.getScheme();
    String authority = u.getRawAuthority();
    boolean ok =
        scheme != null
            && (scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
            && authority != null
            && u.getRawPath() != null
            && u.getRawUserInfo() == null
            && isAuthority(authority);
    return ok ? u : null;
  }

  /** Methods a request may be repeated with (RFC 9110 section 9.2.2): retried or hedged. */
  static final Set<HttpMethod> IDEMPOTENT =
      Set.of(
          HttpMethod.GET,
          HttpMethod.HEAD,
          HttpMethod.OPTIONS,
          HttpMethod.TRACE,
          HttpMethod.PUT,
          HttpMethod.DELETE);

  private RequestChecks() {}

  /** A message for an invalid request, or null when it is acceptable. */
  static @Nullable String problem(HttpRequest req, int maxHeaderFields) {
    if (req.method() == HttpMethod.CONNECT) {
      return "CONNECT is not supported: Parapet is a reverse proxy";
    }
    if (req.headers().size() > maxHeaderFields) {
      return "header fields : " + req.headers().size() + " (expected: <= " + maxHeaderFields + ")";
    }
    // The value as a string first: routing reads it so too, and HeaderList then keeps that one.
    String host = req.headers().get(HttpHeaderNames.HOST);
    int hosts = 0; // counted in place: getAll would copy the values into a list per request
    for (Iterator<? extends CharSequence> it =
            req.headers().valueCharSequenceIterator(HttpHeaderNames.HOST);
        it.hasNext();
        it.next()) {
      hosts++;
    }
    // HTTP/1.0 may leave Host out; HTTP/1.1 must send exactly one, and so does HTTP/2, whose
    // :authority becomes Host where the stream is read.
    if (req.protocolVersion().equals(HttpVersion.HTTP_1_0) ? hosts > 1 : hosts != 1) {
      return "Host headers : " + hosts + " (expected: exactly one)";
    }
    if (host != null && !isAuthority(host)) {
      return "Host : '" + clip(host) + "' (expected: host[:port])";
    }
    return null;
  }

  /**
   * Whether {@code s} is an RFC 3986 §3.2.2 {@code host [":" port]}: an IP literal in brackets (hex
   * digits, ':' and '.'; no zone), or a non-empty reg-name of unreserved characters, sub-delims and
   * percent-encodings; then an optional port of at most five digits, at most 65535. Hand-written
   * rather than {@link java.net.URI}: it runs on every request and allocates nothing.
   */
  static boolean isAuthority(CharSequence s) {
    int n = s.length();
    int i = 0;
    if (n > 0 && s.charAt(0) == '[') {
      for (i = 1; i < n && s.charAt(i) != ']'; i++) {
        char c = s.charAt(i);
        if (!(isHexDigit(c) || c == ':' || c == '.')) {
          return false;
        }
      }
      if (i >= n || i == 1) {
        return false;
      }
      i++; // past ']'
    } else {
      for (; i < n && s.charAt(i) != ':'; i++) {
        char c = s.charAt(i);
        if (c == '%') {
          if (i + 2 >= n || !isHexDigit(s.charAt(i + 1)) || !isHexDigit(s.charAt(i + 2))) {
            return false;
          }
          i += 2;
        } else if (!isRegNameChar(c)) {
          return false;
        }
      }
      if (i == 0) {
        return false; // empty host
      }
    }
    if (i == n) {
      return true;
    }
    if (s.charAt(i) != ':' || n - i - 1 > 5) {
      return false;
    }
    int port = 0;
    for (int j = i + 1; j < n; j++) {
      char c = s.charAt(j);
      if (c < '0' || c > '9') {
        return false;
      }
      port = port * 10 + (c - '0');
    }
    return port <= 65535;
  }

  /** RFC 3986 unreserved / sub-delims: what a reg-name holds besides percent-encodings. */
  private static boolean isRegNameChar(char c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '-'
        || c == '.'
        || c == '_'
        || c == '~'
        || "!$&'()*+,;=".indexOf(c) >= 0;
  }

  private static boolean isHexDigit(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  /** At most 100 characters of a client's value, for a message. */
  static String clip(CharSequence s) {
    return s.length() > 100 ? s.subSequence(0, 100) + "..." : s.toString();
  }

  /** A failure as a short detail for Proxy-Status and the problem body. */
  static String describe(@Nullable Throwable cause) {
    if (cause == null) {
      return "malformed request";
    }
    String m = cause.getMessage();
    String type = cause.getClass().getSimpleName();
    return m == null ? type : type + ": " + (m.length() > 200 ? m.substring(0, 200) : m);
  }
}
