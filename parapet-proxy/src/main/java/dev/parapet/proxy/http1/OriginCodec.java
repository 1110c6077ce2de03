package dev.parapet.proxy.http1;

import static dev.parapet.proxy.http1.BodyFraming.checkChunkedOnly;
import static dev.parapet.proxy.http1.BodyFraming.contentLength;
import static dev.parapet.proxy.http1.BodyFraming.isList;
import static dev.parapet.proxy.http1.ByteScan.indexOf;
import static dev.parapet.proxy.http1.ByteScan.isControl;
import static dev.parapet.proxy.http1.ByteScan.isDigit;
import static dev.parapet.proxy.http1.ByteScan.sameBytes;
import static dev.parapet.proxy.http1.ByteScan.text;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
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

    /**
     * The request line with the target's bytes as they came: the decoder read them as ISO-8859-1,
     * one character per byte, and Netty's encoder would write the target as UTF-8, so a client's
     * {@code /caf\u00e9} byte 0xE9 would reach the origin as the two bytes 0xC3 0xA9, another
     * target (and another cache entry than the origin's own links name).
     */
    @Override
    protected void encodeInitialLine(ByteBuf buf, HttpRequest request) {
      ByteBufUtil.copy(request.method().asciiName(), buf);
      buf.writeByte(' ');
      String uri = request.uri();
      buf.writeCharSequence(uri.isEmpty() ? "/" : uri, StandardCharsets.ISO_8859_1);
      buf.writeByte(' ');
      buf.writeCharSequence(request.protocolVersion().text(), StandardCharsets.US_ASCII);
      buf.writeShort(('\r' << 8) | '\n');
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
   * and do not answer a request; the response to a HEAD, a 204 and a 304 have no body.
   *
   * <p>It is as strict as the request side ({@link RequestDecoder}) wherever a proxy and the next
   * recipient could read a response's framing differently, which would let one response's bytes be
   * taken for another's, or a corrupt body be stored and served from the cache. Refused: a status
   * line that is not {@code HTTP/1.x SP 3DIGIT [SP reason]} with a code from 100 to 599; a bare
   * line feed ending any line (head, chunk sizes, chunk ends, trailers); obsolete line folding; a
   * control character in a value; an invalid header name; a Content-Length that is empty, not
   * digits, too large, or a list or repeated field of differing numbers; any transfer coding but
   * one {@code chunked} ({@code gzip, chunked}, {@code chunked, chunked}, an unknown coding: RFC
   * 9112 §6.3 would frame them, but this proxy decodes no other coding, and a body passed on or
   * stored with a coding still applied and no field saying so is corrupt); Transfer-Encoding with
   * Content-Length, or in an HTTP/1.0 response (§6.1); a {@code 101} (the proxy never asks for an
   * upgrade); a head over its limit. A refused head becomes a 502 whose decoder result is the
   * failure; a body whose framing fails ends with a failed last content. Either way the
   * connection's input is dropped and the connection is not reused. Repaired instead, as RFC 9110
   * §8.6 and RFC 9112 §5.1 let a proxy: equal lengths ({@code 5, 5}, or two fields of {@code 5})
   * become one {@code Content-Length: 5}, and whitespace before a field's colon is removed.
   */
  public static final class ResponseDecoder extends Http1Decoder {
    private final ArrayDeque<HttpMethod> methods;

    ResponseDecoder(
        int maxInitialLineLength,
        int maxHeaderSize,
        int maxChunkSize,
        ArrayDeque<HttpMethod> methods) {
      super(maxInitialLineLength, maxHeaderSize, maxChunkSize, false, 2);
      this.methods = methods;
    }

    @Override
    HttpMessage failedHead(Exception cause) {
      return new DefaultHttpResponse(
          HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_GATEWAY, new HeaderList(0));
    }

    @Override
    void parseHead(byte[] b, int n, HeaderList h, List<Object> out) {
      int eol = indexOf(b, 0, n, (byte) '\n');
      if (eol < 1 || b[eol - 1] != '\r') {
        throw new ProblemException("a status line not ended by CRLF");
      }
      int lineEnd = eol - 1;
      if (lineEnd > maxInitialLineLength) {
        throw new TooLongHttpLineException(
            "status line longer than " + maxInitialLineLength + " bytes");
      }
      if (n - eol - 1 > maxHeaderSize) {
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
      int i = 9; // one space after the version (RFC 9112 §4)
      if (lineEnd < i + 3
          || b[i - 1] != ' '
          || b[i] < '1'
          || b[i] > '5'
          || !isDigit(b[i + 1])
          || !isDigit(b[i + 2])
          || (i + 3 < lineEnd && b[i + 3] != ' ')) {
        throw new ProblemException(
            "invalid status line: "
                + text(b, 0, lineEnd)
                + " (expected: HTTP/1.x, one space, a status code from 100 to 599)");
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

      readFields(b, eol + 1, n, h);
      long contentLength = normalizedContentLength(h);
      int te = h.indexOf(HttpHeaderNames.TRANSFER_ENCODING, 0);

      HttpResponse response = new DefaultHttpResponse(version, status, h);
      if (code < 200) {
        if (code == 101) {
          throw new ProblemException("101 Switching Protocols, though no upgrade was asked for");
        }
        out.add(response);
        return; // interim: no body, and the final response is still to come
      }
      HttpMethod method = methods.poll();
      if (HttpMethod.HEAD.equals(method) || code == 204 || code == 304) {
        out.add(response);
        out.add(LastHttpContent.EMPTY_LAST_CONTENT);
        return;
      }
      if (te >= 0) {
        checkChunkedOnly(h, te, version, contentLength, "response");
      }
      out.add(response);
      if (te >= 0) {
        state = State.CHUNK_SIZE;
      } else if (contentLength == 0) {
        out.add(LastHttpContent.EMPTY_LAST_CONTENT);
      } else if (contentLength > 0) {
        remaining = contentLength;
        state = State.FIXED;
      } else {
        state = State.UNTIL_CLOSE;
      }
    }

    /**
     * The response's Content-Length, or -1 without one. Equal values in a list or in several fields
     * are one length (RFC 9110 §8.6 lets a recipient take them so), and are passed on as one field:
     * the next recipient does not have to make the same choice.
     */
    private static long normalizedContentLength(HeaderList h) {
      int first = h.indexOf(HttpHeaderNames.CONTENT_LENGTH, 0);
      if (first < 0) {
        return -1;
      }
      long length = -1;
      boolean repeated = false;
      for (int f = first; f >= 0; ) {
        length = contentLength(h, f, length);
        int next = h.indexOf(HttpHeaderNames.CONTENT_LENGTH, f + 1);
        repeated |= next >= 0 || isList(h, f);
        f = next;
      }
      if (repeated) {
        h.set(h.nameAt(first), Long.toString(length)); // in the case the origin wrote it
      }
      return length;
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
