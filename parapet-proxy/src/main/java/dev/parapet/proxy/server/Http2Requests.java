package dev.parapet.proxy.server;

import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.netty.util.AsciiString;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Between an HTTP/2 stream's header block and the {@link HttpRequest} / {@link HttpResponse} the
 * request flow speaks (RFC 9113 §8.3 and RFC 9110 on what a proxy converts).
 *
 * <p>Requests: {@code :authority} becomes {@code Host} (RFC 9113 §8.3.1: it takes precedence over a
 * {@code Host} field), {@code :path} the target, split {@code cookie} fields are joined with {@code
 * "; "} (§8.2.3). A request without {@code :method}, {@code :scheme} or {@code :path}, or with a
 * field value holding CR, LF or NUL, is malformed: the stream is reset (§8.1.1) rather than
 * answered, because such a value would split the request the origin receives over HTTP/1.1. The
 * codec has already refused upper-case names, unknown or repeated pseudo-fields and
 * connection-specific fields (§8.2.2). A body whose length is not declared is marked {@code
 * Transfer-Encoding: chunked}, which is how the flow and the origin's HTTP/1.1 learn that a body
 * follows.
 */
final class Http2Requests {
  /** The version a request from an HTTP/2 stream carries: {@code Via} says {@code 2} for it. */
  static final HttpVersion HTTP_2 = new HttpVersion("HTTP", 2, 0, false);

  private static final AsciiString COOKIE = HttpHeaderNames.COOKIE;

  private Http2Requests() {}

  /** Why a header block is not a request (RFC 9113 §8.1.1: malformed), as a message. */
  static final class Malformed extends Exception {
    private static final long serialVersionUID = 1L;

    Malformed(String message) {
      super(message, null, false, false); // a value on the hot path of abuse: no stack trace
    }
  }

  /**
   * The request a stream's {@code headers} open.
   *
   * @param endStream the headers end the stream: the request has no body
   * @throws Malformed when the block is not a valid request
   */
  static HttpRequest toRequest(Http2Headers headers, boolean endStream) throws Malformed {
    CharSequence method = headers.method();
    CharSequence path = headers.path();
    CharSequence scheme = headers.scheme();
    CharSequence authority = headers.authority();
    if (method == null) {
      throw new Malformed(":method : missing (expected: one)");
    }
    boolean connect = HttpMethod.CONNECT.asciiName().contentEquals(method);
    if (!connect && (path == null || path.length() == 0 || scheme == null)) {
      throw new Malformed(":scheme, :path : missing (expected: both, :path not empty)");
    }
    HttpHeaders h = DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
    StringBuilder cookies = null;
    for (Map.Entry<CharSequence, CharSequence> e : headers) {
      CharSequence name = e.getKey();
      CharSequence value = e.getValue();
      if (name.length() > 0 && name.charAt(0) == ':') {
        continue; // pseudo-fields were read above
      }
      if (!isFieldValue(value)) {
        throw new Malformed(name + " : a value with CR, LF or NUL (expected: none)");
      }
      if (COOKIE.contentEqualsIgnoreCase(name)) {
        cookies = cookies == null ? new StringBuilder(value) : cookies.append("; ").append(value);
        continue;
      }
      h.add(name, value);
    }
    if (cookies != null) {
      h.set(COOKIE, cookies.toString());
    }
    if (authority != null) {
      if (!isFieldValue(authority)) {
        throw new Malformed(":authority : a value with CR, LF or NUL (expected: none)");
      }
      h.set(HttpHeaderNames.HOST, authority);
    }
    if (!endStream && !h.contains(HttpHeaderNames.CONTENT_LENGTH)) {
      h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
    }
    String target = connect ? String.valueOf(authority) : path.toString();
    HttpMethod m;
    try {
      m = HttpMethod.valueOf(method.toString());
    } catch (IllegalArgumentException e) {
      throw new Malformed(":method : not a token (expected: GET, POST, ...)");
    }
    return new DefaultHttpRequest(HTTP_2, m, target, h);
  }

  /** The header block of {@code response}: {@code :status} and its fields, lower-case. */
  static Http2Headers toHeaders(HttpResponse response) {
    Http2Headers out = new DefaultHttp2Headers(false);
    out.status(response.status().codeAsText());
    // Lower-cases names and drops the connection-specific fields HTTP/2 forbids (§8.2.2).
    HttpConversionUtil.toHttp2Headers(response.headers(), out);
    return out;
  }

  private static boolean isFieldValue(@Nullable CharSequence v) {
    if (v == null) {
      return true;
    }
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == '\r' || c == '\n' || c == 0) {
        return false;
      }
    }
    return true;
  }
}
