package dev.parapet.proxy.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Builds the responses the proxy makes itself: status, {@code Proxy-Status} (RFC 9209), {@code
 * Retry-After} on 503s, and an RFC 9457 {@code application/problem+json} body with type, title,
 * status, detail, reason and scope. The {@link Downstream} that sends one adds this hop's {@code
 * Via}, as it does to every response.
 */
public final class LocalResponses {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String name;

  /** Responses signed with this proxy's {@code name} (DESIGN.md: "appears in Proxy-Status"). */
  public LocalResponses(String name) {
    this.name = name;
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
    ObjectNode body = JSON.createObjectNode();
    body.put("type", error.problemType());
    body.put("title", error.title());
    body.put("status", error.status().code());
    body.put("detail", detail);
    body.put("reason", error.proxyStatusError());
    if (scope != null) {
      body.put("scope", scope);
    }
    if (requestId != null) {
      body.put("request_id", requestId);
    }
    byte[] bytes;
    try {
      bytes = JSON.writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      bytes = ("{\"status\":" + error.status().code() + "}").getBytes(StandardCharsets.US_ASCII);
    }
    FullHttpResponse r =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1, error.status(), alloc.buffer(bytes.length).writeBytes(bytes));
    r.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, "application/problem+json")
        .setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes())
        .set(HttpHeaderNames.CACHE_CONTROL, "no-store")
        .set("Proxy-Status", proxyStatus(error, detail));
    if (requestId != null) {
      r.headers().set("X-Request-Id", requestId);
    }
    if (retryAfterSeconds >= 0) {
      r.headers().set(HttpHeaderNames.RETRY_AFTER, Long.toString(retryAfterSeconds));
    }
    return r;
  }

  /** {@code name; error=type; details="..."} with the detail as an sf-string (RFC 8941). */
  String proxyStatus(ProxyError error, String detail) {
    return name + "; error=" + error.proxyStatusError() + "; details=" + sfString(detail);
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
