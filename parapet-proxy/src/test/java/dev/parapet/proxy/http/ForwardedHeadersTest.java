package dev.parapet.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;

class ForwardedHeadersTest {

  private static HttpHeaders via(String... values) {
    HttpHeaders h = new DefaultHttpHeaders();
    for (String v : values) {
      h.add("Via", v);
    }
    return h;
  }

  @Test
  void viaContainsFindsThisProxyAmongTheHops() {
    assertThat(ForwardedHeaders.viaContains(via("1.1 edge-1, 1.1 shield-1"), "shield-1")).isTrue();
    assertThat(ForwardedHeaders.viaContains(via("1.1 edge-1"), "EDGE-1")).isTrue();
    assertThat(
            ForwardedHeaders.viaContains(
                via("1.0 fred, 1.1 p.example.net (Apache/1.1)"), "p.example.net"))
        .isTrue();
    assertThat(ForwardedHeaders.viaContains(via("1.1 a", "HTTP/1.1   edge-1 "), "edge-1")).isTrue();
  }

  @Test
  void viaContainsMatchesWholeNamesOnly() {
    assertThat(ForwardedHeaders.viaContains(via("1.1 edge-10"), "edge-1")).isFalse();
    assertThat(ForwardedHeaders.viaContains(via("1.1 xedge-1"), "edge-1")).isFalse();
    assertThat(ForwardedHeaders.viaContains(via("edge-1"), "edge-1")).isFalse(); // no protocol
    assertThat(ForwardedHeaders.viaContains(via(), "edge-1")).isFalse();
    assertThat(ForwardedHeaders.viaContains(via(",, ,"), "edge-1")).isFalse();
  }

  @Test
  void hopByHopFieldsAndThoseConnectionNamesAreRemoved() {
    HttpHeaders h = new DefaultHttpHeaders();
    h.add("Connection", "keep-alive, X-Secret");
    h.add("Connection", "close");
    h.add("Keep-Alive", "timeout=5");
    h.add("TE", "trailers");
    h.add("Proxy-Connection", "keep-alive");
    h.add("X-Secret", "1");
    h.add("Host", "example.com");
    h.add("Content-Length", "3");
    h.add("X-End-To-End", "kept");

    ForwardedHeaders.stripHopByHop(h);

    assertThat(h.names()).containsExactlyInAnyOrder("Host", "Content-Length", "X-End-To-End");
  }

  @Test
  void everyFixedHopByHopNameAndOddlySpacedConnectionOptionsAreHandled() {
    HttpHeaders h = new DefaultHttpHeaders();
    h.add("connection", ",\tX-A ,, x-b\t, UPGRADE,");
    h.add("Transfer-Encoding", "chunked");
    h.add("Trailer", "X-T");
    h.add("Upgrade", "websocket");
    h.add("Proxy-Authorization", "Basic x");
    h.add("Proxy-Authenticate", "Basic");
    h.add("X-A", "1");
    h.add("X-B", "2");
    h.add("X-Ab", "kept: only whole names count");
    h.add("Date", "kept");

    ForwardedHeaders.stripHopByHop(h);

    assertThat(h.names()).containsExactlyInAnyOrder("X-Ab", "Date");
  }

  @Test
  void connectionCannotStripHostOrContentLength() {
    HttpHeaders h = new DefaultHttpHeaders();
    h.add("Connection", "Host, Content-Length");
    h.add("Host", "example.com");
    h.add("Content-Length", "0");
    ForwardedHeaders.stripHopByHop(h);
    assertThat(h.contains("Host")).isTrue();
    assertThat(h.contains("Content-Length")).isTrue();
  }

  @Test
  void viaIsAppendedWithEachProxysOwnName() {
    for (int round = 0; round < 3; round++) {
      for (String name : new String[] {"edge-1", "shield-1"}) {
        HttpHeaders fresh = new DefaultHttpHeaders();
        ForwardedHeaders.appendVia(fresh, ForwardedHeaders.viaMember(name));
        assertThat(fresh.get("Via")).isEqualTo("1.1 " + name);
        HttpHeaders seen = via("1.1 client-proxy");
        ForwardedHeaders.appendVia(seen, ForwardedHeaders.viaMember(name));
        assertThat(seen.get("Via")).isEqualTo("1.1 client-proxy, 1.1 " + name);
      }
    }
  }
}
