package dev.parapet.proxy.http1;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpStatusClass;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP/1.1 codec of a client connection: Parapet's request decoder ({@link RequestDecoder}, the
 * response decoder's sibling: fields as views into the head, strict where smuggling lives) and
 * Netty's response encoder, paired as {@link io.netty.handler.codec.http.HttpServerCodec} pairs its
 * two (each response matched to its request's method: no body in the answer to a HEAD, no
 * Transfer-Encoding in a 2xx to a CONNECT, and interim responses such as {@code 100 Continue}
 * answer no request of their own).
 *
 * <p>A message whose fields came from a peer ({@link HeaderList}) has them written as the bytes
 * they arrived in, one copy per run of unchanged fields, instead of field by field. {@code
 * HttpServerCodec} cannot be given that, its encoder being private.
 */
public final class ClientCodec {
  private ClientCodec() {}

  /**
   * The decoder and the encoder of one client connection, sharing the queue of methods received, to
   * be added to its pipeline in this order (two handlers, not a {@code
   * CombinedChannelDuplexHandler}: see {@code OriginCodec.handlers}).
   *
   * @param maxRequestLine the longest request line accepted
   * @param maxHeaderBytes the largest request header section accepted
   * @param maxChunkSize the largest request body piece passed on at once
   */
  public static ChannelHandler[] handlers(
      int maxRequestLine, int maxHeaderBytes, int maxChunkSize) {
    ArrayDeque<HttpMethod> methods = new ArrayDeque<>(4);
    return new ChannelHandler[] {
      new RequestDecoder(maxRequestLine, maxHeaderBytes, maxChunkSize, methods),
      new ResponseEncoder(methods)
    };
  }

  /** Netty's response encoder, aware of the method each response answers. */
  static final class ResponseEncoder extends HttpResponseEncoder {
    private final ArrayDeque<HttpMethod> methods;
    private @Nullable HttpMethod method;

    ResponseEncoder(ArrayDeque<HttpMethod> methods) {
      this.methods = methods;
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpResponse msg) {
      if (msg.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
        return super.isContentAlwaysEmpty(msg); // 100 Continue: the request is still to be answered
      }
      method = methods.poll();
      return HttpMethod.HEAD.equals(method) || super.isContentAlwaysEmpty(msg);
    }

    @Override
    protected void sanitizeHeadersBeforeEncode(HttpResponse msg, boolean isAlwaysEmpty) {
      if (!isAlwaysEmpty
          && HttpMethod.CONNECT.equals(method)
          && msg.status().codeClass() == HttpStatusClass.SUCCESS) {
        msg.headers().remove(HttpHeaderNames.TRANSFER_ENCODING); // RFC 9112 §6.1
        return;
      }
      super.sanitizeHeadersBeforeEncode(msg, isAlwaysEmpty);
    }

    @Override
    protected void encodeHeaders(HttpHeaders headers, ByteBuf buf) {
      if (headers instanceof HeaderList received) {
        received.encodeTo(buf);
      } else {
        super.encodeHeaders(headers, buf);
      }
    }
  }
}
