package dev.parapet.proxy.http;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.parapet.proxy.http1.HeaderList;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Builds the responses the proxy makes itself: status, {@code Proxy-Status} (RFC 9209), {@code
 * Retry-After} on 503s, and an RFC 9457 {@code application/problem+json} body with type, title,
 * status, detail, reason and scope. The {@link Downstream} that sends one adds this hop's {@code
 * Via}, as it does to every response.
 *
 * <p>These are the answers of an open breaker, of shedding and of every other fast failure, so an
 * edge sends them at the highest rates it ever sees (tens of thousands per second per core while an
 * origin is down). The body's fixed parts are encoded once per error, its strings are escaped by
 * Jackson's {@link JsonStringEncoder} only when they need it, and it is written straight into the
 * response's buffer: building a JSON tree and serializing it with an {@code ObjectMapper} was 38 %
 * of the event loop's user time on the breaker-open path and over 2 KB of garbage per answer.
 */
public final class LocalResponses {
  private static final AsciiString PROXY_STATUS = HeaderList.token("Proxy-Status");
  private static final AsciiString REQUEST_ID = HeaderList.token("X-Request-Id");
  private static final AsciiString PROBLEM_JSON = AsciiString.cached("application/problem+json");
  private static final AsciiString NO_STORE = AsciiString.cached("no-store");
  private static final byte[] SCOPE = ascii(",\"scope\":\"");
  private static final byte[] REQUEST_ID_KEY = ascii(",\"request_id\":\"");

  /** Per error, the body's fixed parts. */
  private final Map<ProxyError, BodyParts> bodyParts = new EnumMap<>(ProxyError.class);

  /** Per error, {@code name; error=type; details=}: the start of its {@code Proxy-Status}. */
  private final Map<ProxyError, String> proxyStatusStart = new EnumMap<>(ProxyError.class);

  /** The last {@code Proxy-Status} made, reused while its error and detail repeat (they do). */
  private volatile @Nullable LastProxyStatus last;

  private record LastProxyStatus(ProxyError error, String detail, String value) {}

  /**
   * The body up to the detail's opening quote ({@code type}, {@code title}, {@code status}), and
   * from its closing quote to where {@code scope} would start ({@code reason}), UTF-8.
   */
  private record BodyParts(byte[] beforeDetail, byte[] afterDetail) {}

  /** Responses signed with this proxy's {@code name} (DESIGN.md: "appears in Proxy-Status"). */
  public LocalResponses(String name) {
    for (ProxyError e : ProxyError.values()) {
      String before =
          "{\"type\":"
              + quoted(e.problemType())
              + ",\"title\":"
              + quoted(e.title())
              + ",\"status\":"
              + e.status().code()
              + ",\"detail\":\"";
      String after = "\",\"reason\":" + quoted(e.proxyStatusError());
      bodyParts.put(
          e,
          new BodyParts(
              before.getBytes(StandardCharsets.UTF_8), after.getBytes(StandardCharsets.UTF_8)));
      proxyStatusStart.put(e, name + "; error=" + e.proxyStatusError() + "; details=");
    }
  }

  /**
   * A complete local response.
   *
   * @param detail human detail for the problem body and the {@code details} parameter
   * @param scope the breaker or pool this is about (from configuration), or null
   * @param retryAfterSeconds seconds for {@code Retry-After}, or a negative value for none
   */
  public FullHttpResponse build(
      ByteBufAllocator alloc,
      ProxyError error,
      String detail,
      @Nullable String scope,
      long retryAfterSeconds) {
    return build(alloc, error, detail, scope, retryAfterSeconds, null);
  }

  /**
   * A complete local response naming the request's {@code X-Request-Id} in its body ({@code
   * request_id}) and in an {@code X-Request-Id} field, so a user's report can be found in the logs.
   */
  public FullHttpResponse build(
      ByteBufAllocator alloc,
      ProxyError error,
      String detail,
      @Nullable String scope,
      long retryAfterSeconds,
      @Nullable String requestId) {
    BodyParts parts = bodyParts.get(error);
    // What it holds when nothing needs escaping; an escaped string grows the buffer.
    int size =
        parts.beforeDetail.length
            + detail.length()
            + parts.afterDetail.length
            + (scope == null ? 0 : SCOPE.length + scope.length() + 1)
            + (requestId == null ? 0 : REQUEST_ID_KEY.length + requestId.length() + 1)
            + 1;
    ByteBuf body = alloc.buffer(size);
    body.writeBytes(parts.beforeDetail);
    writeEscaped(body, detail);
    body.writeBytes(parts.afterDetail);
    if (scope != null) {
      body.writeBytes(SCOPE);
      writeEscaped(body, scope);
      body.writeByte('"');
    }
    if (requestId != null) {
      body.writeBytes(REQUEST_ID_KEY);
      writeEscaped(body, requestId);
      body.writeByte('"');
    }
    body.writeByte('}');
    // A new list holding each name once: strings are added without the lookup set() makes, and
    // numbers set as digits written when encoded.
    HeaderList h = new HeaderList(7);
    h.add(HttpHeaderNames.CONTENT_TYPE, PROBLEM_JSON)
        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes())
        .add(HttpHeaderNames.CACHE_CONTROL, NO_STORE)
        .add(PROXY_STATUS, proxyStatus(error, detail));
    if (requestId != null) {
      h.add(REQUEST_ID, requestId);
    }
    if (retryAfterSeconds >= 0) {
      h.setInt(HttpHeaderNames.RETRY_AFTER, (int) Math.min(Integer.MAX_VALUE, retryAfterSeconds));
    }
    // Trailers are never added to a local answer; the empty set saves a second field table.
    return new DefaultFullHttpResponse(
        HttpVersion.HTTP_1_1, error.status(), body, h, EmptyHttpHeaders.INSTANCE);
  }

  /** {@code name; error=type; details="..."} with the detail as an sf-string (RFC 8941). */
  String proxyStatus(ProxyError error, String detail) {
    LastProxyStatus l = last;
    if (l != null && l.error == error && l.detail.equals(detail)) {
      return l.value;
    }
    String v = proxyStatusStart.get(error) + sfString(detail);
    last = new LastProxyStatus(error, detail, v);
    return v;
  }

  /** {@code s} as a JSON string's content (no quotes) into {@code out}, UTF-8. */
  private static void writeEscaped(ByteBuf out, String s) {
    if (plainAscii(s)) {
      out.writeCharSequence(s, StandardCharsets.US_ASCII);
    } else {
      out.writeBytes(JsonStringEncoder.getInstance().quoteAsUTF8(s));
    }
  }

  /** Whether {@code s} is printable ASCII without {@code "} or {@code \}: JSON as it is. */
  private static boolean plainAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
        return false;
      }
    }
    return true;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static String quoted(String s) {
    return '"' + new String(JsonStringEncoder.getInstance().quoteAsString(s)) + '"';
  }

  /** An RFC 8941 string: printable ASCII, with {@code "} and {@code \} escaped. */
  public static String sfString(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c >= 0x20 && c < 0x7f) {
        b.append(c);
      } else {
        b.append('?');
      }
    }
    return b.append('"').toString();
  }
}
