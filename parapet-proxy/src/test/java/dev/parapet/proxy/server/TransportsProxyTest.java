package dev.parapet.proxy.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.net.Transport;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestOrigin;
import dev.parapet.proxy.upstream.OriginSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The proxy path on every transport this machine has (io_uring, epoll, NIO): the rest of the suite
 * runs on the one {@code auto} picks, so the others get at least this much over real sockets.
 */
class TransportsProxyTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  static Stream<String> transports() {
    return Transport.available().stream().map(Transport::name);
  }

  @ParameterizedTest
  @MethodSource("transports")
  void forwardsKeepsAliveStreamsBodiesAndRefusesBadInput(String name) throws Exception {
    TestOrigin origin = fx.testOrigin();
    ProxyServer proxy =
        fx.proxy()
            .name("transports")
            .threads(1)
            .transport(Transport.named(name))
            .routes(new Route("r", null, "/", "o", Duration.ofSeconds(8)))
            .origins(OriginSettings.defaults("o", List.of(origin.address())))
            .start();
    assertThat(proxy.transport().name()).isEqualTo(name);
    try (Socket s = new Socket("127.0.0.1", proxy.port())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      // two requests on one connection, the second with a chunked body
      out.write(ascii("GET /a HTTP/1.1\r\nHost: x\r\nConnection: X-Hop\r\nX-Hop: 1\r\n\r\n"));
      out.flush();
      String first = response(in);
      assertThat(first).startsWith("HTTP/1.1 200 ").contains("hello from origin /a");
      assertThat(first.toLowerCase(java.util.Locale.ROOT))
          .contains("\r\nvia: 1.1 transports\r\n")
          .doesNotContain("x-hop");
      out.write(
          ascii(
              "POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                  + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
      out.flush();
      assertThat(response(in)).startsWith("HTTP/1.1 200 ").contains("hello from origin /b");
      // smuggling-shaped input is refused and ends the connection
      out.write(
          ascii(
              "POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                  + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"));
      out.flush();
      String refused = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
      assertThat(refused).startsWith("HTTP/1.1 400 ");
    }
    assertThat(origin.calls.get()).isEqualTo(2);
    assertThat(new String(origin.seenBodies.get(1), StandardCharsets.UTF_8))
        .isEqualTo("hello world");
    assertThat(origin.seenHeaders.get(0)).doesNotContainKey("X-hop");
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  /** One response with a Content-Length body, read byte by byte up to its end. */
  private static String response(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      head.write(b);
      String h = head.toString(StandardCharsets.ISO_8859_1);
      if (h.endsWith("\r\n\r\n")) {
        int length = 0;
        for (String line : h.split("\r\n")) {
          if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
            length = Integer.parseInt(line.substring(15).trim());
          }
        }
        return h + new String(in.readNBytes(length), StandardCharsets.ISO_8859_1);
      }
    }
    return head.toString(StandardCharsets.ISO_8859_1);
  }
}
