package dev.parapet.proxy.http1;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.parapet.proxy.http1.WireFuzz.Event;
import dev.parapet.proxy.http1.WireFuzz.Framing;
import dev.parapet.proxy.http1.WireFuzz.Head;
import dev.parapet.proxy.http1.WireFuzz.Limits;
import io.netty.channel.ChannelHandler;
import io.netty.handler.codec.http.HttpMethod;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzzes the client side's request decoder ({@link RequestDecoder}) with {@link WireFuzz}'s checks
 * and a reading of RFC 9112 of its own: an accepted request line is {@code token SP target SP
 * HTTP/1.x} with no control or space in the target; an accepted request has exactly one {@code
 * chunked} Transfer-Encoding (HTTP/1.1, no Content-Length), or one Content-Length of plain digits,
 * or no body; and the methods handed to the response encoder are those of the heads passed on, in
 * order (a refused head counts as a GET). Seeds: {@code RequestDecoderFuzzTestInputs/request/}.
 */
class RequestDecoderFuzzTest {
  /** ProxyServer's: 8 KiB request line, 32 KiB head, 16 KiB body pieces. */
  private static final Limits PRODUCTION = new Limits(8 * 1024, 32 * 1024, 16 * 1024);

  @FuzzTest
  void request(byte[] data) {
    WireFuzz.check(new Requests(), WireFuzz.Input.of(data, PRODUCTION));
  }

  private static final class Requests implements WireFuzz.Side {
    private ArrayDeque<HttpMethod> methods = new ArrayDeque<>();

    @Override
    public ChannelHandler[] handlers(Limits limits) {
      methods = new ArrayDeque<>();
      return new ChannelHandler[] {
        new RequestDecoder(limits.initialLine(), limits.header(), limits.chunk(), methods)
      };
    }

    @Override
    public void after(List<Event> events) {
      List<String> heads = new ArrayList<>();
      for (Event e : events) {
        if (e instanceof Head h) {
          heads.add(
              h.failure() == null ? h.startLine().substring(0, h.startLine().indexOf(' ')) : "GET");
        }
      }
      assertThat(methods.stream().map(HttpMethod::name).toList())
          .as("the methods queued for the response encoder")
          .containsExactlyElementsOf(heads);
    }

    @Override
    public Framing framing(Head head, int index) {
      String[] parts = head.startLine().split(" ", -1);
      assertThat(parts).as("request line parts: %s", head.startLine()).hasSize(3);
      assertThat(parts[0]).as("method").isNotEmpty();
      for (char c : parts[0].toCharArray()) {
        assertThat(WireFuzz.isTchar(c)).as("a token character in method %s", parts[0]).isTrue();
      }
      assertThat(parts[1]).as("request target").isNotEmpty();
      for (char c : parts[1].toCharArray()) {
        assertThat(c > ' ' && c != 0x7F).as("a control character in target %s", parts[1]).isTrue();
      }
      assertThat(parts[2]).isIn("HTTP/1.1", "HTTP/1.0");

      List<String> te = WireFuzz.values(head, "transfer-encoding");
      List<String> cl = WireFuzz.values(head, "content-length");
      if (!te.isEmpty()) {
        assertThat(te).as("Transfer-Encoding of an accepted request").hasSize(1);
        assertThat(te.get(0)).as("Transfer-Encoding").isEqualToIgnoringCase("chunked");
        assertThat(cl).as("Content-Length beside Transfer-Encoding").isEmpty();
        assertThat(parts[2]).as("Transfer-Encoding in HTTP/1.0").isEqualTo("HTTP/1.1");
        return Framing.CHUNKED;
      }
      if (!cl.isEmpty()) {
        assertThat(cl).as("Content-Length fields of an accepted request").hasSize(1);
        assertThat(cl.get(0)).as("Content-Length").matches("[0-9]{1,18}");
        return Framing.fixed(Long.parseLong(cl.get(0)));
      }
      return Framing.NONE;
    }
  }
}
