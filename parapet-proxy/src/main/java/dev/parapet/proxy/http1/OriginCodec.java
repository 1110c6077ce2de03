package dev.parapet.proxy.http1;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The HTTP/1.1 codec of an origin connection: Netty's request encoder and a response decoder of our
 * own, paired as {@link io.netty.handler.codec.http.HttpClientCodec} pairs them (each response
 * matched to its request's method, so the response to a HEAD is known to have no body).
 *
 * <p>The decoder ({@link ResponseDecoder}) copies a response head once and hands on its fields as
 * views into that copy ({@link HeaderList}); common header names, the version and standard status
 * lines come from constants. Names are matched byte for byte, so the case the origin sent is what
 * the client receives.
 */
public final class OriginCodec {

  /** Standard reason phrases by status code, as bytes (null where Netty knows none). */
  private static final byte[][] REASON_BYTES = new byte[600][];

  static {
    for (int i = 100; i < REASON_BYTES.length; i++) {
      HttpResponseStatus known = HttpResponseStatus.valueOf(i);
      if (known == HttpResponseStatus.valueOf(i)) { // a constant, not made up for this code
        REASON_BYTES[i] = known.reasonPhrase().getBytes(StandardCharsets.US_ASCII);
      }
    }
  }

  private OriginCodec() {}

  /**
   * The decoder and the encoder of one origin connection, sharing the queue of methods sent, to be
   * added to its pipeline in this order (two handlers rather than one {@code
   * CombinedChannelDuplexHandler}: each event then passes one context, not a context and a
   * delegating one, ~2 % of the event loop's own time).
   *
   * @param maxInitialLineLength the longest status line accepted
   * @param maxHeaderSize the largest response header section accepted
   * @param maxChunkSize the largest body piece passed on at once
   */
  public static ChannelHandler[] handlers(
      int maxInitialLineLength, int maxHeaderSize, int maxChunkSize) {
    ArrayDeque<HttpMethod> methods = new ArrayDeque<>(4);
    return new ChannelHandler[] {
      new ResponseDecoder(maxInitialLineLength, maxHeaderSize, maxChunkSize, methods),
      new RequestEncoder(methods)
    };
  }

  /** Records each request's method so that its response is decoded accordingly. */
  public static final class RequestEncoder extends HttpRequestEncoder {
    private final ArrayDeque<HttpMethod> methods;

    RequestEncoder(ArrayDeque<HttpMethod> methods) {
      this.methods = methods;
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Object msg, List<Object> out)
        throws Exception {
      if (msg instanceof HttpRequest r) {
        methods.offer(r.method());
      }
      super.encode(ctx, msg, out);
    }

    @Override
    protected void encodeHeaders(HttpHeaders headers, ByteBuf buf) {
      if (headers instanceof HeaderList list) {
        list.encodeTo(buf); // no entry objects, one pass
      } else {
        super.encodeHeaders(headers, buf);
      }
    }
  }

  /**
   * Decodes origin responses (see {@link Http1Decoder}): the head into a {@link
   * DefaultHttpResponse} with {@link HeaderList}, the body framed by Content-Length, chunked coding
   * or the connection's close. Interim (1xx) responses come alone, without a content of their own,
   * and do not answer a request; the response to a HEAD, a 204 and a 304 have no body. A malformed
   * head becomes a 502 whose decoder result is the failure.
   */
  public static final class ResponseDecoder extends Http1Decoder {
    private final ArrayDeque<HttpMethod> methods;

    ResponseDecoder(
        int maxInitialLineLength,
        int maxHeaderSize,
        int maxChunkSize,
        ArrayDeque<HttpMethod> methods) {
      super(maxInitialLineLength, maxHeaderSize, maxChunkSize, false);
      this.methods = methods;
    }

    @Override
    HttpMessage failedHead(Exception cause) {
      return new DefaultHttpResponse(
          HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_GATEWAY, new HeaderList(0));
    }

    @Override
    void parseHead(byte[] b, List<Object> out) {
      int n = b.length;
      int eol = indexOf(b, 0, n, (byte) '\n');
      int lineEnd = eol > 0 && b[eol - 1] == '\r' ? eol - 1 : eol;
      if (lineEnd > maxInitialLineLength) {
        throw new TooLongHttpLineException(
            "status line longer than " + maxInitialLineLength + " bytes");
      }
      if (n - eol > maxHeaderSize) {
        throw new TooLongHttpHeaderException(
            "response header section larger than " + maxHeaderSize + " bytes");
      }
      HttpVersion version;
      if (lineEnd >= 8 && sameBytes(b, 0, 8, HTTP_1_1_BYTES, 0)) {
        version = HttpVersion.HTTP_1_1;
      } else if (lineEnd >= 8 && sameBytes(b, 0, 8, HTTP_1_0_BYTES, 0)) {
        version = HttpVersion.HTTP_1_0;
      } else {
        throw new ProblemException(
            "not an HTTP/1.1 or HTTP/1.0 status line: " + text(b, 0, lineEnd));
      }
      int i = 8;
      if (i >= lineEnd || b[i] != ' ') {
        throw new ProblemException("no status code: " + text(b, 0, lineEnd));
      }
      while (i < lineEnd && b[i] == ' ') {
        i++;
      }
      if (i + 3 > lineEnd
          || !isDigit(b[i])
          || !isDigit(b[i + 1])
          || !isDigit(b[i + 2])
          || (i + 3 < lineEnd && b[i + 3] != ' ')
          || b[i] == '0') {
        throw new ProblemException("invalid status code: " + text(b, 0, lineEnd));
      }
      int code = (b[i] - '0') * 100 + (b[i + 1] - '0') * 10 + (b[i + 2] - '0');
      i += 3;
      while (i < lineEnd && b[i] == ' ') {
        i++;
      }
      for (int k = i; k < lineEnd; k++) {
        if (isControl(b[k])) {
          throw new ProblemException("a control character in the reason phrase");
        }
      }
      HttpResponseStatus status = status(code, b, i, lineEnd - i);

      // Room for about as many fields as the head has lines (~28 bytes each), and two added.
      HeaderList h = new HeaderList(b, (n - eol) / 28 + 2);
      readFields(b, eol + 1, h);
      long contentLength = -1;
      int lastTransferEncoding = -1;
      for (int f = h.indexOf(HttpHeaderNames.CONTENT_LENGTH, 0); f >= 0; ) {
        contentLength = contentLength(h.valueAt(f), contentLength);
        f = h.indexOf(HttpHeaderNames.CONTENT_LENGTH, f + 1);
      }
      for (int f = h.indexOf(HttpHeaderNames.TRANSFER_ENCODING, 0); f >= 0; ) {
        lastTransferEncoding = f;
        f = h.indexOf(HttpHeaderNames.TRANSFER_ENCODING, f + 1);
      }
      boolean transferEncoding = lastTransferEncoding >= 0;
      // the last field's last coding decides
      boolean chunked = transferEncoding && lastCodingIsChunked(h.valueAt(lastTransferEncoding));

      HttpResponse response = new DefaultHttpResponse(version, status, h);
      if (code < 200) {
        out.add(response);
        return; // interim: no body, and the final response is still to come
      }
      HttpMethod method = methods.poll();
      if (HttpMethod.HEAD.equals(method) || code == 204 || code == 304) {
        out.add(response);
        out.add(LastHttpContent.EMPTY_LAST_CONTENT);
        return;
      }
      if (transferEncoding && contentLength >= 0) {
        throw new ProblemException("Transfer-Encoding and Content-Length in one response");
      }
      out.add(response);
      if (transferEncoding) {
        state = chunked ? State.CHUNK_SIZE : State.UNTIL_CLOSE;
      } else if (contentLength == 0) {
        out.add(LastHttpContent.EMPTY_LAST_CONTENT);
      } else if (contentLength > 0) {
        remaining = contentLength;
        state = State.FIXED;
      } else {
        state = State.UNTIL_CLOSE;
      }
    }

    private static HttpResponseStatus status(int code, byte[] b, int start, int length) {
      if (code < REASON_BYTES.length) {
        byte[] standard = REASON_BYTES[code];
        if (standard != null
            && standard.length == length
            && sameBytes(b, start, length, standard, 0)) {
          return HttpResponseStatus.valueOf(code);
        }
      }
      return new HttpResponseStatus(
          code, new String(b, start, length, StandardCharsets.ISO_8859_1));
    }
  }
}
