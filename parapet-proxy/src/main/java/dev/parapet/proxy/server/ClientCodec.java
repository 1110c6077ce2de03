package dev.parapet.proxy.server;

import dev.parapet.proxy.upstream.HeaderList;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpStatusClass;
import java.util.ArrayDeque;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP/1.1 codec of a client connection: Netty's request decoder and response encoder, paired
 * as {@link io.netty.handler.codec.http.HttpServerCodec} pairs them (each response matched to its
 * request's method: no body in the answer to a HEAD, no Transfer-Encoding in a 2xx to a CONNECT,
 * and interim responses such as {@code 100 Continue} answer no request of their own).
 *
 * <p>The one difference: a response whose fields came from an origin ({@link HeaderList}) has them
 * written as the bytes they arrived in, one copy per run of unchanged fields, instead of field by
 * field. {@code HttpServerCodec} cannot be given that, its encoder being private. Request smuggling
 * checks are the proxy's own (see {@code ClientConnection.validate}): a request with both
 * Transfer-Encoding and Content-Length never gets this far.
 */
final class ClientCodec
    extends CombinedChannelDuplexHandler<ClientCodec.RequestDecoder, ClientCodec.ResponseEncoder> {

  ClientCodec(HttpDecoderConfig config) {
    ArrayDeque<HttpMethod> methods = new ArrayDeque<>(4);
    init(new RequestDecoder(config, methods), new ResponseEncoder(methods));
  }

  /** Netty's request decoder, noting each request's method for its response. */
  static final class RequestDecoder extends HttpRequestDecoder {
    private final ArrayDeque<HttpMethod> methods;

    RequestDecoder(HttpDecoderConfig config, ArrayDeque<HttpMethod> methods) {
      super(config);
      this.methods = methods;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out)
        throws Exception {
      int before = out.size();
      super.decode(ctx, buffer, out);
      for (int i = before; i < out.size(); i++) {
        if (out.get(i) instanceof HttpRequest r) {
          methods.add(r.method());
        }
      }
    }
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
