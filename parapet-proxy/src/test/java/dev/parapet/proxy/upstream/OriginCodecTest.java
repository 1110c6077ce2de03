package dev.parapet.proxy.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The origin connection's codec decodes what Netty's client codec decodes, from constants. */
class OriginCodecTest {
  private final EmbeddedChannel ch = new EmbeddedChannel(new OriginCodec(8192, 32 * 1024, 8192));

  @AfterEach
  void close() {
    Object o;
    while ((o = ch.readOutbound()) != null) {
      ReferenceCountUtil.release(o);
    }
    while ((o = ch.readInbound()) != null) {
      ReferenceCountUtil.release(o);
    }
    ch.finishAndReleaseAll();
  }

  private void send(HttpMethod method) {
    ch.writeOutbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, "/x"));
    ByteBuf wire = ch.readOutbound();
    assertThat(wire.toString(StandardCharsets.US_ASCII)).startsWith(method.name() + " /x HTTP/1.1");
    wire.release();
  }

  private List<Object> receive(String response) {
    ch.writeInbound(Unpooled.copiedBuffer(response, StandardCharsets.US_ASCII));
    List<Object> in = new ArrayList<>();
    Object o;
    while ((o = ch.readInbound()) != null) {
      in.add(o);
    }
    return in;
  }

  private static String body(List<Object> msgs) {
    StringBuilder b = new StringBuilder();
    for (Object o : msgs) {
      if (o instanceof HttpContent c) {
        b.append(c.content().toString(StandardCharsets.US_ASCII));
      }
      ReferenceCountUtil.release(o);
    }
    return b.toString();
  }

  @Test
  void headerNamesAndStatusLineAsSentIncludingCaseAndUnknownOnes() {
    send(HttpMethod.GET);
    List<Object> in =
        receive(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ncontent-length: 2\r\n"
                + "X-Custom-Thing: a\r\nETag: \"v1\"\r\n\r\nhi");
    HttpResponse r = (HttpResponse) in.get(0);
    assertThat(r.status()).isSameAs(HttpResponseStatus.OK);
    assertThat(r.protocolVersion()).isSameAs(HttpVersion.HTTP_1_1);
    List<String> names = new ArrayList<>();
    for (Map.Entry<String, String> e : r.headers()) {
      names.add(e.getKey() + "=" + e.getValue());
    }
    assertThat(names)
        .containsExactly(
            "Content-Type=text/plain", "content-length=2", "X-Custom-Thing=a", "ETag=\"v1\"");
    assertThat(in.get(in.size() - 1)).isInstanceOf(LastHttpContent.class);
    assertThat(body(in)).isEqualTo("hi");
  }

  @Test
  void uncommonStatusAndReasonKeptAsSent() {
    send(HttpMethod.GET);
    List<Object> in = receive("HTTP/1.1 599 Odd Thing\r\nContent-Length: 0\r\n\r\n");
    HttpResponse r = (HttpResponse) in.get(0);
    assertThat(r.status().code()).isEqualTo(599);
    assertThat(r.status().reasonPhrase()).isEqualTo("Odd Thing");
    body(in);
    send(HttpMethod.GET);
    in = receive("HTTP/1.1 200 Fine\r\nContent-Length: 0\r\n\r\n");
    assertThat(((HttpResponse) in.get(0)).status().reasonPhrase()).isEqualTo("Fine");
    body(in);
  }

  @Test
  void responseToHeadHasNoBodyWhateverItsContentLengthSays() {
    send(HttpMethod.HEAD);
    send(HttpMethod.GET);
    // Pipelined: the HEAD's response declares 5 bytes but carries none; the GET's follows at once.
    List<Object> in =
        receive(
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");
    long heads = in.stream().filter(o -> o instanceof HttpResponse).count();
    assertThat(heads).isEqualTo(2);
    assertThat(body(in)).isEqualTo("abc");
  }

  @Test
  void interimResponseDoesNotTakeTheRequestsPlace() {
    send(HttpMethod.HEAD);
    List<Object> in =
        receive(
            "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
    assertThat(in.stream().filter(o -> o instanceof HttpResponse).count()).isEqualTo(2);
    assertThat(((HttpResponse) in.get(0)).status().code()).isEqualTo(103);
    assertThat(body(in)).isEmpty(); // the HEAD's answer still has no body
  }

  @Test
  void garbageStatusLineIsADecoderFailure() {
    send(HttpMethod.GET);
    List<Object> in = receive("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n");
    assertThat(((HttpResponse) in.get(0)).decoderResult().isFailure()).isTrue();
    body(in);
  }
}
