package dev.parapet.proxy.http1;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The client codec pairs responses with their requests' methods as HttpServerCodec does. */
class ClientCodecTest {
  private final EmbeddedChannel ch = new EmbeddedChannel(ClientCodec.handlers(4096, 8192, 8192));

  @AfterEach
  void close() {
    ch.finishAndReleaseAll();
  }

  private void request(String raw) {
    ch.writeInbound(Unpooled.copiedBuffer(raw, StandardCharsets.US_ASCII));
    Object o;
    while ((o = ch.readInbound()) != null) {
      if (o instanceof HttpRequest r) {
        assertThat(r.decoderResult().isSuccess()).isTrue();
      }
      ReferenceCountUtil.release(o);
    }
  }

  private String written() {
    StringBuilder s = new StringBuilder();
    Object o;
    while ((o = ch.readOutbound()) != null) {
      ByteBuf b = (ByteBuf) o;
      s.append(b.toString(StandardCharsets.US_ASCII));
      b.release();
    }
    return s.toString();
  }

  private static DefaultFullHttpResponse ok(String body) {
    DefaultFullHttpResponse r =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            HttpResponseStatus.OK,
            Unpooled.copiedBuffer(body, StandardCharsets.US_ASCII));
    r.headers().set("Content-Length", body.length());
    return r;
  }

  @Test
  void pipelinedResponsesFollowTheirRequestsMethodsAndInterimOnesTakeNoTurn() {
    request(
        "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
            + "HEAD /b HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n"
            + "GET /c HTTP/1.1\r\nHost: x\r\n\r\n");
    ch.writeOutbound(ok("one"));
    assertThat(written()).endsWith("\r\n\r\none");
    ch.writeOutbound(
        new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
    assertThat(written()).startsWith("HTTP/1.1 100 Continue\r\n");
    ch.writeOutbound(ok("two"));
    String head = written();
    assertThat(head).contains("Content-Length: 3").endsWith("\r\n\r\n"); // HEAD: no body
    ch.writeOutbound(ok("three"));
    assertThat(written()).endsWith("\r\n\r\nthree");
  }

  @Test
  void anOriginsFieldsAreWrittenAsTheyCame() {
    request("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    EmbeddedChannel origin = new EmbeddedChannel(OriginCodec.handlers(8192, 32 * 1024, 8192));
    origin.writeOutbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/a"));
    ReferenceCountUtil.release(origin.readOutbound());
    origin.writeInbound(
        Unpooled.copiedBuffer(
            "HTTP/1.1 200 OK\r\nx-lower: a\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi",
            StandardCharsets.US_ASCII));
    DefaultHttpResponse head = origin.readInbound();
    head.headers().remove("Connection");
    head.headers().add("Via", "1.1 edge");
    ch.writeOutbound(head);
    LastHttpContent body = origin.readInbound();
    ch.writeOutbound(body);
    assertThat(written())
        .isEqualTo("HTTP/1.1 200 OK\r\nx-lower: a\r\nContent-Length: 2\r\nVia: 1.1 edge\r\n\r\nhi");
    origin.finishAndReleaseAll();
  }
}
