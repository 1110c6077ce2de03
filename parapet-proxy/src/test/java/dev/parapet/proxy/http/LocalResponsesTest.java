package dev.parapet.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.handler.codec.http.FullHttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LocalResponsesTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final LocalResponses responses = new LocalResponses("edge-1");

  private static JsonNode body(FullHttpResponse r) throws Exception {
    return JSON.readTree(r.content().toString(StandardCharsets.UTF_8));
  }

  @Test
  void aBreakerOpenAnswerCarriesTheProblemAndTheWireSignals() throws Exception {
    FullHttpResponse r =
        responses.build(
            UnpooledByteBufAllocator.DEFAULT,
            ProxyError.BREAKER_OPEN,
            "breaker open",
            "route:api",
            7,
            "0123456789abcdef");
    try {
      assertThat(r.status().code()).isEqualTo(503);
      JsonNode b = body(r);
      assertThat(b.get("type").asText()).isEqualTo("https://parapet.dev/problems/breaker-open");
      assertThat(b.get("title").asText()).isEqualTo("breaker open");
      assertThat(b.get("status").asInt()).isEqualTo(503);
      assertThat(b.get("detail").asText()).isEqualTo("breaker open");
      assertThat(b.get("reason").asText()).isEqualTo("destination_unavailable");
      assertThat(b.get("scope").asText()).isEqualTo("route:api");
      assertThat(b.get("request_id").asText()).isEqualTo("0123456789abcdef");
      List<String> names = new ArrayList<>();
      b.fieldNames().forEachRemaining(names::add);
      assertThat(names)
          .containsExactly("type", "title", "status", "detail", "reason", "scope", "request_id");
      assertThat(r.headers().get("Content-Type")).isEqualTo("application/problem+json");
      assertThat(r.headers().getInt("Content-Length")).isEqualTo(r.content().readableBytes());
      assertThat(r.headers().get("Cache-Control")).isEqualTo("no-store");
      assertThat(r.headers().get("Retry-After")).isEqualTo("7");
      assertThat(r.headers().get("X-Request-Id")).isEqualTo("0123456789abcdef");
      assertThat(r.headers().get("Proxy-Status"))
          .isEqualTo("edge-1; error=destination_unavailable; details=\"breaker open\"");
      assertThat(r.trailingHeaders().isEmpty()).isTrue();
    } finally {
      r.release();
    }
  }

  @Test
  void withoutScopeRequestIdOrRetryAfterThoseAreAbsent() throws Exception {
    FullHttpResponse r =
        responses.build(
            UnpooledByteBufAllocator.DEFAULT, ProxyError.NO_ROUTE, "no route", null, -1);
    try {
      JsonNode b = body(r);
      assertThat(b.has("scope")).isFalse();
      assertThat(b.has("request_id")).isFalse();
      assertThat(r.headers().contains("Retry-After")).isFalse();
      assertThat(r.headers().contains("X-Request-Id")).isFalse();
      assertThat(r.status().code()).isEqualTo(404);
    } finally {
      r.release();
    }
  }

  /**
   * Seeded random strings (quotes, backslashes, controls, non-ASCII, surrogate pairs) in the detail
   * and scope, quotes and backslashes in the request id: the body stays valid JSON and reads back
   * as written, and the Proxy-Status detail stays a printable sf-string.
   */
  @Test
  void anyDetailScopeOrRequestIdReadsBackAsWritten() throws Exception {
    Random random = new Random(20261207L);
    String alphabet = "aZ09 -_:/\"\\\t\n\r\u0000\u001f\u007f\u00e9\u20ac\ud83d\ude00{}";
    for (int i = 0; i < 500; i++) {
      String detail = randomString(random, alphabet);
      String scope = randomString(random, alphabet);
      // A request id is a received header value or a generated one: no controls.
      String id = randomString(random, "aZ09-_:/\"\\{}");
      ProxyError error = ProxyError.values()[random.nextInt(ProxyError.values().length)];
      FullHttpResponse r =
          responses.build(UnpooledByteBufAllocator.DEFAULT, error, detail, scope, i, id);
      try {
        JsonNode b = body(r);
        assertThat(b.get("detail").asText()).isEqualTo(detail);
        assertThat(b.get("scope").asText()).isEqualTo(scope);
        assertThat(b.get("request_id").asText()).isEqualTo(id);
        assertThat(b.get("status").asInt()).isEqualTo(error.status().code());
        assertThat(r.headers().getInt("Content-Length")).isEqualTo(r.content().readableBytes());
        String ps = r.headers().get("Proxy-Status");
        assertThat(ps).startsWith("edge-1; error=" + error.proxyStatusError() + "; details=\"");
        assertThat(ps.chars().allMatch(c -> c >= 0x20 && c < 0x7f)).isTrue();
      } finally {
        r.release();
      }
    }
  }

  @Test
  void theProxyStatusOfARepeatedDetailIsTheSameAndAChangedOneIsNew() {
    String a = responses.proxyStatus(ProxyError.SHED, "load shed");
    assertThat(responses.proxyStatus(ProxyError.SHED, "load shed")).isSameAs(a);
    assertThat(responses.proxyStatus(ProxyError.SHED, "queue full"))
        .isEqualTo("edge-1; error=proxy_internal_response; details=\"queue full\"");
    assertThat(responses.proxyStatus(ProxyError.BREAKER_OPEN, "queue full"))
        .isEqualTo("edge-1; error=destination_unavailable; details=\"queue full\"");
  }

  private static String randomString(Random random, String alphabet) {
    StringBuilder b = new StringBuilder();
    int n = random.nextInt(12);
    for (int i = 0; i < n; i++) {
      int at = random.nextInt(alphabet.length());
      char c = alphabet.charAt(at);
      if (Character.isHighSurrogate(c)) {
        b.append(c).append(alphabet.charAt(at + 1));
      } else if (!Character.isLowSurrogate(c)) {
        b.append(c);
      }
    }
    return b.toString();
  }
}
