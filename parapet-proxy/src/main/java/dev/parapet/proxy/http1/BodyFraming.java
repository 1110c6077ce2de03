package dev.parapet.proxy.http1;

import static dev.parapet.proxy.http1.ByteScan.indexOf;
import static dev.parapet.proxy.http1.ByteScan.isDigit;
import static dev.parapet.proxy.http1.ByteScan.isOws;

import dev.parapet.proxy.http1.Http1Decoder.ProblemException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;

/**
 * The fields that frame a message's body, read as strictly as a proxy must (RFC 9112 §6): a
 * Content-Length and a Transfer-Encoding that the proxy and the next recipient could read
 * differently are refused, since one message's bytes would then be taken for another's. Shared by
 * the request and the response decoder; what each side repairs or refuses beyond this is theirs.
 */
final class BodyFraming {
  private BodyFraming() {}

  /**
   * A Content-Length value: one number, or a list of the same number (RFC 9110 §8.6), and the same
   * as any earlier field's. Why not Netty's {@code HttpUtil.normalizeAndGetContentLength}: it wants
   * the values as a list and turns each into a String (split with {@code String.split} when it
   * holds a list), allocations on every response, and it skips the same-number check for HTTP/1.0
   * responses, which a proxy must not. An empty value is invalid too: read as "no length", it would
   * let a body be taken for the next message.
   */
  static long contentLength(HeaderList h, int field, long before) {
    // Read in place: the decoder's fields are still the head's bytes.
    byte[] b = h.head();
    int span = h.valueSpan(field);
    int from = span >>> 16;
    int n = span & 0xFFFF;
    if (from == n) {
      throw new ProblemException("invalid Content-Length: empty (expected: digits)");
    }
    long length = -1;
    int i = from;
    while (i < n) {
      int start = i;
      long v = 0;
      while (i < n && isDigit(b[i])) {
        if (i - start >= 18) {
          throw new ProblemException("Content-Length too large");
        }
        v = v * 10 + (b[i] - '0');
        i++;
      }
      if (i == start) {
        throw new ProblemException("invalid Content-Length: " + text(b, from, n));
      }
      if (length >= 0 && v != length) {
        throw new ProblemException("conflicting Content-Length values: " + text(b, from, n));
      }
      length = v;
      while (i < n && isOws(b[i])) {
        i++;
      }
      if (i < n) {
        if (b[i] != ',') {
          throw new ProblemException("invalid Content-Length: " + text(b, from, n));
        }
        i++;
        while (i < n && isOws(b[i])) {
          i++;
        }
        if (i == n) {
          throw new ProblemException("invalid Content-Length: " + text(b, from, n));
        }
      }
    }
    if (before >= 0 && before != length) {
      throw new ProblemException("conflicting Content-Length fields");
    }
    return length;
  }

  /** Whether received field {@code field}'s value is a list (holds a comma), read in place. */
  static boolean isList(HeaderList h, int field) {
    int span = h.valueSpan(field);
    return indexOf(h.head(), span >>> 16, span & 0xFFFF, (byte) ',') >= 0;
  }

  /** A value's bytes as the characters they are (ISO-8859-1), for a message. */
  private static String text(byte[] b, int from, int to) {
    return new String(b, from, to - from, StandardCharsets.ISO_8859_1);
  }

  /**
   * Transfer-Encoding on a message with a body, the same rule both ways: one field of {@code
   * chunked}, the only coding this proxy frames by, in an HTTP/1.1 message without Content-Length
   * (RFC 9112 §6.1, §6.3). Any other coding would be framed by the next recipient and not by this
   * proxy, or passed on still coded under a field removed as hop-by-hop.
   *
   * @param te the index of the first Transfer-Encoding field in {@code h}
   * @param message {@code request} or {@code response}, for the message
   */
  static void checkChunkedOnly(
      HeaderList h, int te, HttpVersion version, long contentLength, String message) {
    if (h.indexOf(HttpHeaderNames.TRANSFER_ENCODING, te + 1) >= 0
        || !AsciiString.contentEqualsIgnoreCase(h.valueAt(te), HttpHeaderValues.CHUNKED)) {
      throw new ProblemException(
          "Transfer-Encoding : "
              + String.join(", ", h.getAll(HttpHeaderNames.TRANSFER_ENCODING))
              + " (expected: chunked alone)");
    }
    if (version == HttpVersion.HTTP_1_0) {
      throw new ProblemException("Transfer-Encoding in an HTTP/1.0 " + message);
    }
    if (contentLength >= 0) {
      throw new ProblemException("Transfer-Encoding and Content-Length in one " + message);
    }
  }
}
