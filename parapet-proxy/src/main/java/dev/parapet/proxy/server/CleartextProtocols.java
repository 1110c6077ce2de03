package dev.parapet.proxy.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Consumer;

/**
 * The first handler of a cleartext connection: HTTP/1.1, or HTTP/2 with prior knowledge (h2c, RFC
 * 9113 §3.3)? It looks at the first bytes only. While they are a prefix of the 24-byte client
 * preface ({@code PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n}) it waits for more; the whole preface makes the
 * connection HTTP/2 ({@link Http2Connections#install}), anything else HTTP/1.1 (no request line
 * starts with {@code PRI *}). Then it removes itself and hands on the bytes it held, so the chosen
 * codec reads the stream from its first byte. HTTP/1.1's {@code Upgrade: h2c} is not offered:
 * clients that speak h2c use prior knowledge.
 */
final class CleartextProtocols extends ByteToMessageDecoder {
  static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final Http2Connections http2;
  private final Consumer<ChannelPipeline> http1;

  /**
   * @param http1 adds the HTTP/1.1 handlers at the end of the pipeline
   */
  CleartextProtocols(Http2Connections http2, Consumer<ChannelPipeline> http1) {
    this.http2 = http2;
    this.http1 = http1;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    int n = Math.min(in.readableBytes(), PREFACE.length);
    int from = in.readerIndex();
    for (int i = 0; i < n; i++) {
      if (in.getByte(from + i) != PREFACE[i]) {
        choose(ctx, false);
        return;
      }
    }
    if (n == PREFACE.length) {
      choose(ctx, true);
    }
  }

  private void choose(ChannelHandlerContext ctx, boolean h2) {
    ChannelPipeline p = ctx.pipeline();
    if (h2) {
      // The slow-head timer speaks HTTP/1.1 (a 408): HTTP/2 has its own idle handling.
      if (p.get("head-timer") != null) {
        p.remove("head-timer");
      }
      http2.install(p);
    } else {
      http1.accept(p);
    }
    p.remove(this); // hands the bytes held so far to the handlers just added
  }
}
