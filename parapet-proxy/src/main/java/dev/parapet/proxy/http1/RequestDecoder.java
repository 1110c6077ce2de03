package dev.parapet.proxy.http1;

import static dev.parapet.proxy.http1.BodyFraming.checkChunkedOnly;
import static dev.parapet.proxy.http1.BodyFraming.contentLength;
import static dev.parapet.proxy.http1.BodyFraming.isList;
import static dev.parapet.proxy.http1.ByteScan.indexOf;
import static dev.parapet.proxy.http1.ByteScan.sameBytes;
import static dev.parapet.proxy.http1.ByteScan.sameText;
import static dev.parapet.proxy.http1.ByteScan.text;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpExpectationFailedEvent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValidationUtil;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Decodes client requests (see {@link Http1Decoder}) into a {@link DefaultHttpRequest} with {@link
 * HeaderList} and a body framed by Content-Length or chunked coding; a request with neither has no
 * body and is one {@link DefaultFullHttpRequest} with empty content. It lives beside the response
 * decoder it shares its parts with; the client side's codec uses it.
 *
 * <p>What it refuses, each as a request whose decoder result is a failure (the connection answers
 * 400 and closes): a request line that is not {@code method SP target SP HTTP/1.x} with single
 * spaces and CRLF, a control character or space in the target, a method that is not a token, a bare
 * line feed ending any line of the head or of chunked framing (size lines, chunk ends, trailers),
 * whitespace before a field's colon, obsolete line folding, more than one Content-Length field or a
 * list in one, Transfer-Encoding other than a single {@code chunked}, Transfer-Encoding with
 * Content-Length or in an HTTP/1.0 request (RFC 9112 §3, §2.2, §5.1, §5.2, §6.1, §6.3), a request
 * line or header section over its limit. Each of these is read differently by some server or proxy,
 * which is what request smuggling needs. The limits on field count, Host and methods are the
 * connection's ({@code ClientConnection.validate}).
 */
public final class RequestDecoder extends Http1Decoder {
  private static final byte[] GET_BYTES = {'G', 'E', 'T'};

  private final ArrayDeque<HttpMethod> methods;

  /** The target of the connection's last request, as a string. */
  private @Nullable String lastTarget;

  /**
   * @param maxInitialLineLength the longest request line accepted
   * @param maxHeaderSize the largest header section accepted
   * @param maxChunkSize the largest body piece passed on at once
   * @param methods each request's method is added here as the request is passed on, for the encoder
   *     of the responses (the answer to a HEAD has no body)
   */
  public RequestDecoder(
      int maxInitialLineLength,
      int maxHeaderSize,
      int maxChunkSize,
      ArrayDeque<HttpMethod> methods) {
    super(maxInitialLineLength, maxHeaderSize, maxChunkSize, true, 6);
    this.methods = methods;
  }

  @Override
  HttpMessage failedHead(Exception cause) {
    // As Netty's decoder does: a GET of HTTP/1.0 (no keep-alive) that the connection refuses.
    methods.add(HttpMethod.GET);
    return new DefaultFullHttpRequest(
        HttpVersion.HTTP_1_0,
        HttpMethod.GET,
        "/bad-request",
        Unpooled.EMPTY_BUFFER,
        new HeaderList(0),
        new HeaderList(0));
  }

  /**
   * An expectation refused with a 417 (Netty's {@link HttpExpectationFailedEvent}, fired by a
   * handler after the decoder): the request is dropped and its body is not coming (RFC 9110
   * §10.1.1), so the next bytes are the next request.
   */
  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof HttpExpectationFailedEvent && state != State.FAILED) {
      state = State.HEAD;
      remaining = 0;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  void parseHead(byte[] b, int n, HeaderList h, List<Object> out) {
    int eol = indexOf(b, 0, n, (byte) '\n');
    if (eol < 1 || b[eol - 1] != '\r') {
      throw new ProblemException("a request line not ended by CRLF");
    }
    int lineEnd = eol - 1;
    if (lineEnd > maxInitialLineLength) {
      throw new TooLongHttpLineException(
          "request line longer than " + maxInitialLineLength + " bytes");
    }
    if (n - eol - 1 > maxHeaderSize) {
      throw new TooLongHttpHeaderException(
          "request header section larger than " + maxHeaderSize + " bytes");
    }
    int methodEnd = indexOf(b, 0, lineEnd, (byte) ' ');
    int targetEnd = methodEnd < 0 ? -1 : indexOf(b, methodEnd + 1, lineEnd, (byte) ' ');
    if (methodEnd <= 0 || targetEnd <= methodEnd + 1 || lineEnd - targetEnd - 1 != 8) {
      throw new ProblemException("not a request line: " + text(b, 0, lineEnd));
    }
    HttpMethod method = method(b, methodEnd);
    for (int i = methodEnd + 1; i < targetEnd; i++) {
      if ((b[i] >= 0 && b[i] <= ' ') || b[i] == 0x7F) {
        throw new ProblemException("a control character in the request target");
      }
    }
    HttpVersion version;
    if (sameBytes(b, targetEnd + 1, 8, HTTP_1_1_BYTES, 0)) {
      version = HttpVersion.HTTP_1_1;
    } else if (sameBytes(b, targetEnd + 1, 8, HTTP_1_0_BYTES, 0)) {
      version = HttpVersion.HTTP_1_0;
    } else {
      throw new ProblemException("not HTTP/1.1 or HTTP/1.0: " + text(b, targetEnd + 1, lineEnd));
    }
    // Non-ASCII bytes in the target pass as ISO-8859-1 characters, one per byte, as Netty's did;
    // the same target as the connection's previous request is the same string.
    String uri = lastTarget;
    int targetLength = targetEnd - methodEnd - 1;
    if (uri == null || !sameText(uri, b, methodEnd + 1, targetLength)) {
      uri = new String(b, methodEnd + 1, targetLength, StandardCharsets.ISO_8859_1);
      lastTarget = uri;
    }

    readFields(b, eol + 1, n, h);
    long contentLength = -1;
    int f = h.indexOf(HttpHeaderNames.CONTENT_LENGTH, 0);
    if (f >= 0) {
      if (h.indexOf(HttpHeaderNames.CONTENT_LENGTH, f + 1) >= 0 || isList(h, f)) {
        throw new ProblemException("more than one Content-Length");
      }
      contentLength = contentLength(h, f, -1);
    }
    int te = h.indexOf(HttpHeaderNames.TRANSFER_ENCODING, 0);
    if (te >= 0) {
      checkChunkedOnly(h, te, version, contentLength, "request");
    }
    methods.add(method);
    if (te < 0 && contentLength <= 0) {
      // No body: the request is whole, one message rather than a head and an empty last content
      // (one pass through the pipeline, and the origin's encoder writes it in one piece).
      out.add(
          new DefaultFullHttpRequest(
              version, method, uri, Unpooled.EMPTY_BUFFER, h, EmptyHttpHeaders.INSTANCE));
      return;
    }
    out.add(new DefaultHttpRequest(version, method, uri, h));
    if (te >= 0) {
      state = State.CHUNK_SIZE;
    } else {
      remaining = contentLength;
      state = State.FIXED;
    }
  }

  /**
   * The method in {@code b[0, length)}: a constant for the standard ones, checked to be a token.
   */
  private static HttpMethod method(byte[] b, int length) {
    if (length == 3 && sameBytes(b, 0, 3, GET_BYTES, 0)) {
      return HttpMethod.GET; // most requests: no string
    }
    AsciiString name = new AsciiString(b, 0, length, false);
    if (HttpHeaderValidationUtil.validateToken(name) >= 0) {
      throw new ProblemException("a method that is not a token: " + text(b, 0, length));
    }
    return HttpMethod.valueOf(name.toString()); // the standard ones are constants
  }
}
