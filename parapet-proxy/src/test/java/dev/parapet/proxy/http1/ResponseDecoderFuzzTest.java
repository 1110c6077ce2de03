package dev.parapet.proxy.http1;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.parapet.proxy.http1.WireFuzz.Framing;
import dev.parapet.proxy.http1.WireFuzz.Head;
import dev.parapet.proxy.http1.WireFuzz.Limits;
import io.netty.channel.ChannelHandler;
import io.netty.handler.codec.http.HttpMethod;
import java.util.ArrayDeque;
import java.util.List;

/**
 * Fuzzes the origin connection's response decoder ({@link OriginCodec.ResponseDecoder}) with {@link
 * WireFuzz}'s checks and a reading of RFC 9112 §6.3 of its own: an accepted status line is {@code
 * HTTP/1.x} and a three-digit code; every Content-Length is a list of one and the same number; a
 * 1xx has no body, the answer to a HEAD, a 204 and a 304 an empty one; Transfer-Encoding never
 * comes with Content-Length, and frames the body as chunked exactly when the last coding of the
 * last field is {@code chunked}, else until the close; a Content-Length frames it by length; with
 * neither it runs until the close. The first two input bits above the cut mode say whether the
 * first and second responses answer a HEAD. Seeds: {@code ResponseDecoderFuzzTestInputs/response/}.
 */
class ResponseDecoderFuzzTest {
  /** HostPool's: 8 KiB status line, 32 KiB head, 8 KiB body pieces. */
  private static final Limits PRODUCTION = new Limits(8 * 1024, 32 * 1024, 8 * 1024);

  @FuzzTest
  void response(byte[] data) {
    WireFuzz.Input in = WireFuzz.Input.of(data, PRODUCTION);
    WireFuzz.check(new Responses(in.bit(6), in.bit(7)), in);
  }

  private record Responses(boolean firstIsHead, boolean secondIsHead) implements WireFuzz.Side {
    @Override
    public ChannelHandler[] handlers(Limits limits) {
      ArrayDeque<HttpMethod> methods = new ArrayDeque<>();
      methods.add(firstIsHead ? HttpMethod.HEAD : HttpMethod.GET);
      methods.add(secondIsHead ? HttpMethod.HEAD : HttpMethod.GET);
      return new ChannelHandler[] {
        new OriginCodec.ResponseDecoder(
            limits.initialLine(), limits.header(), limits.chunk(), methods)
      };
    }

    @Override
    public Framing framing(Head head, int index) {
      String line = head.startLine();
      assertThat(line).as("status line").matches("(?s)HTTP/1\\.[01] [1-9][0-9][0-9] .*");
      for (char c : line.toCharArray()) {
        assertThat(c >= ' ' && c != 0x7F || c == '\t').as("a control in %s", line).isTrue();
      }
      int code = head.status();
      long length = -1;
      for (String v : WireFuzz.values(head, "content-length")) {
        for (String element : v.split(",", -1)) {
          String n = element.strip();
          assertThat(n).as("a Content-Length element in [%s]", v).matches("[0-9]{1,18}");
          assertThat(length < 0 || Long.parseLong(n) == length)
              .as("one Content-Length in [%s]", v)
              .isTrue();
          length = Long.parseLong(n);
        }
      }
      if (code < 200) {
        return Framing.INTERIM;
      }
      boolean head0 = (index == 0 && firstIsHead) || (index == 1 && secondIsHead);
      if (head0 || code == 204 || code == 304) {
        return Framing.NONE;
      }
      List<String> te = WireFuzz.values(head, "transfer-encoding");
      if (!te.isEmpty()) {
        assertThat(length).as("Content-Length beside Transfer-Encoding").isNegative();
        return lastCoding(te.get(te.size() - 1)).equalsIgnoreCase("chunked")
            ? Framing.CHUNKED
            : Framing.CLOSE;
      }
      return length >= 0 ? Framing.fixed(length) : Framing.CLOSE;
    }

    /** The last non-empty element of a list value (RFC 9110 §5.6.1), OWS removed. */
    private static String lastCoding(String value) {
      String[] elements = value.split(",", -1);
      for (int i = elements.length - 1; i >= 0; i--) {
        String e = elements[i].strip();
        if (!e.isEmpty()) {
          return e;
        }
      }
      return "";
    }
  }
}
