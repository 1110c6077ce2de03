package dev.parapet.proxy.flow;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.util.Iterator;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a request head must satisfy before anything is done with it, beyond what the decoder already
 * refused (smuggling, bad framing, oversized heads): no CONNECT (Parapet is a reverse proxy), a
 * bounded number of fields, exactly one Host on HTTP/1.1 (RFC 9112 §3.2).
 */
final class RequestChecks {
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
    int hosts = 0; // counted in place: getAll would copy the values into a list per request
    for (Iterator<? extends CharSequence> it =
            req.headers().valueCharSequenceIterator(HttpHeaderNames.HOST);
        it.hasNext(); ) {
      it.next();
      hosts++;
    }
    if (req.protocolVersion().equals(HttpVersion.HTTP_1_1) ? hosts != 1 : hosts > 1) {
      return "Host headers : " + hosts + " (expected: exactly one)";
    }
    return null;
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
