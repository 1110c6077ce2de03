package dev.parapet.proxy.http1;

import static dev.parapet.proxy.http1.ByteScan.indexOfColon;
import static dev.parapet.proxy.http1.ByteScan.indexOfControl;
import static dev.parapet.proxy.http1.ByteScan.isControl;
import static dev.parapet.proxy.http1.ByteScan.isOws;
import static dev.parapet.proxy.http1.ByteScan.text;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.EventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP/1.1 message decoder both sides of the proxy share (RFC 9112): a head copied once, whose
 * fields are handed on as views into that copy ({@link HeaderList}), then the body as {@link
 * io.netty.handler.codec.http.HttpContent} pieces of at most {@code maxChunkSize} ending with a
 * {@link LastHttpContent}, framed by Content-Length, chunked coding or (responses only) the
 * connection's close. Subclasses read the start line and decide the framing ({@link
 * OriginCodec.ResponseDecoder}, {@link RequestDecoder}).
 *
 * <p>Anything malformed becomes one message whose decoder result is a failure (a head if no head
 * was passed on yet, else a last content), after which the connection's input is dropped: it cannot
 * be trusted to find the next message.
 *
 * <p>Why not Netty's {@code HttpObjectDecoder}: it copies each value into a string and each field
 * into a validating hash table, which the proxy then edits and re-encodes field by field; here a
 * head is copied once, and unchanged fields are written on as the bytes they came in. It is also
 * stricter where a proxy must be: Transfer-Encoding with Content-Length, obsolete line folding,
 * conflicting lengths and bare line feeds are errors (RFC 9112 §6.1, §5.2, §6.3, §2.2), not
 * repaired guesses.
 */
public abstract class Http1Decoder extends ByteToMessageDecoder {
  static final byte[] HTTP_1_1_BYTES = "HTTP/1.1".getBytes(StandardCharsets.US_ASCII);
  static final byte[] HTTP_1_0_BYTES = "HTTP/1.0".getBytes(StandardCharsets.US_ASCII);

  enum State {
    HEAD,
    FIXED,
    CHUNK_SIZE,
    CHUNK_DATA,
    CHUNK_END,
    TRAILERS,
    UNTIL_CLOSE,
    FAILED
  }

  final int maxInitialLineLength;
  final int maxHeaderSize;
  private final int maxChunkSize;

  /** Field slots a message gets beyond its received fields: for what the proxy adds. */
  private final int addedFields;

  /**
   * The fields (and head array) of a message whose reader gave them back ({@link #takeBack}), for
   * the next head: a connection's messages then share one set instead of allocating two arrays and
   * a head copy each. Null while the last set is still out (a pipelined request waiting, a response
   * the cache keeps): the next head gets a new set.
   */
  private @Nullable HeaderList spare;

  /**
   * The connection's event loop, once decoding began: the only thread that may give fields back.
   */
  private @Nullable EventExecutor loop;

  /** Decoding requests (a server's side): stricter where RFC 9112 asks a server to be. */
  private final boolean request;

  /**
   * "request head" or "response head", for messages (made once: a concatenation per head cost about
   * 100 bytes a request).
   */
  private final String headSection;

  State state = State.HEAD;

  /** FIXED: body bytes to come; CHUNK_DATA: bytes to come of the current chunk. */
  long remaining;

  /** While looking for the end of a head or trailer section: bytes already searched. */
  private int scanned;

  /** ... and where, relative to the reader index, the line being searched began. */
  private int lineStart;

  /**
   * @param maxInitialLineLength the longest start line accepted
   * @param maxHeaderSize the largest header section accepted
   * @param maxChunkSize the largest body piece passed on at once
   * @param request whether requests are decoded (else responses)
   * @param addedFields field slots a message gets beyond its received fields
   */
  Http1Decoder(
      int maxInitialLineLength,
      int maxHeaderSize,
      int maxChunkSize,
      boolean request,
      int addedFields) {
    if (maxInitialLineLength + maxHeaderSize >= HeaderList.MAX_HEAD) {
      throw new IllegalArgumentException(
          "maxInitialLineLength + maxHeaderSize : "
              + (maxInitialLineLength + maxHeaderSize)
              + " (expected: < "
              + HeaderList.MAX_HEAD
              + ", heads are described with 16-bit offsets)");
    }
    this.maxInitialLineLength = maxInitialLineLength;
    this.maxHeaderSize = maxHeaderSize;
    this.maxChunkSize = maxChunkSize;
    this.request = request;
    this.addedFields = addedFields;
    this.headSection = request ? "request head" : "response head";
  }

  /**
   * Reads the head in {@code b[0, n)} (start line, fields, the empty line), its fields into {@code
   * h} (empty, its head {@code b}), adds the message to {@code out} and sets {@link #state} (and
   * {@link #remaining}) for its body; throws {@link ProblemException} or a {@link
   * TooLongFrameException} if it is not acceptable.
   */
  abstract void parseHead(byte[] b, int n, HeaderList h, List<Object> out);

  /** The message passed on for a head that could not be accepted, its decoder result set. */
  abstract HttpMessage failedHead(Exception cause);

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (loop == null) {
      loop = ctx.executor();
    }
    while (in.isReadable()) {
      try {
        if (!step(in, out)) {
          return;
        }
      } catch (ProblemException | TooLongFrameException e) {
        fail(in, out, e);
        return;
      }
    }
  }

  /** One step of the current state; false when it needs more input. */
  private boolean step(ByteBuf in, List<Object> out) {
    switch (state) {
      case HEAD -> {
        return readHead(in, out);
      }
      case FIXED -> {
        int n = (int) Math.min(Math.min(remaining, in.readableBytes()), maxChunkSize);
        ByteBuf piece = in.readRetainedSlice(n);
        remaining -= n;
        if (remaining == 0) {
          out.add(new DefaultLastHttpContent(piece, EmptyHttpHeaders.INSTANCE)); // no trailers
          state = State.HEAD;
        } else {
          out.add(new DefaultHttpContent(piece));
        }
        return true;
      }
      case UNTIL_CLOSE -> {
        out.add(
            new DefaultHttpContent(
                in.readRetainedSlice(Math.min(in.readableBytes(), maxChunkSize))));
        return true;
      }
      case CHUNK_SIZE -> {
        return readChunkSize(in);
      }
      case CHUNK_DATA -> {
        int n = (int) Math.min(Math.min(remaining, in.readableBytes()), maxChunkSize);
        out.add(new DefaultHttpContent(in.readRetainedSlice(n)));
        remaining -= n;
        if (remaining == 0) {
          state = State.CHUNK_END;
        }
        return true;
      }
      case CHUNK_END -> {
        byte b = in.getByte(in.readerIndex());
        if (b == '\n') {
          throw bareLineFeed("the end of chunk data");
        } else if (b == '\r') {
          if (in.readableBytes() < 2) {
            return false;
          }
          if (in.getByte(in.readerIndex() + 1) != '\n') {
            throw new ProblemException("chunk data not followed by CRLF");
          }
          in.skipBytes(2);
        } else {
          throw new ProblemException("chunk data longer than its size");
        }
        state = State.CHUNK_SIZE;
        return true;
      }
      case TRAILERS -> {
        return readTrailers(in, out);
      }
      default -> {
        in.skipBytes(in.readableBytes()); // FAILED: nothing here can be framed any more
        return false;
      }
    }
  }

  @Override
  protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out)
      throws Exception {
    super.decodeLast(ctx, in, out);
    if (state == State.UNTIL_CLOSE) {
      // The close is the end of this body. A body framed otherwise that ends here is cut short:
      // nothing is emitted, and the connection's close tells the exchange so.
      out.add(LastHttpContent.EMPTY_LAST_CONTENT);
      state = State.HEAD;
    }
  }

  private void fail(ByteBuf in, List<Object> out, Exception cause) {
    boolean headPassedOn = state != State.HEAD;
    state = State.FAILED;
    in.skipBytes(in.readableBytes());
    if (headPassedOn) {
      LastHttpContent c =
          new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER, EmptyHttpHeaders.INSTANCE);
      c.setDecoderResult(DecoderResult.failure(cause));
      out.add(c);
    } else {
      HttpMessage m = failedHead(cause);
      m.setDecoderResult(DecoderResult.failure(cause));
      out.add(m);
    }
  }

  /**
   * A line {@code where} ends with a bare line feed: refused in requests and responses alike. RFC
   * 9112 §2.2 lets a recipient accept it, but a line end that one parser takes for a line end and
   * another for part of a value is what request smuggling (and, from an origin that lets a value be
   * injected, response splitting) is made of.
   */
  private static ProblemException bareLineFeed(String where) {
    return new ProblemException("a bare line feed ends " + where);
  }

  /**
   * Finds the end of a section of lines ending with an empty line, searching only bytes not
   * searched before. Returns the index after that empty line, or -1 if it has not arrived.
   */
  private int sectionEnd(ByteBuf in, int limit, String section) {
    int base = in.readerIndex();
    int end = in.writerIndex();
    int from = base + scanned;
    while (true) {
      int lf = in.indexOf(from, end, (byte) '\n');
      if (lf < 0) {
        scanned = end - base;
        if (scanned > limit) {
          throw new TooLongHttpHeaderException(section + " larger than " + limit + " bytes");
        }
        return -1;
      }
      int line = base + lineStart;
      if (lf == line || (lf == line + 1 && in.getByte(line) == '\r')) {
        scanned = 0;
        lineStart = 0;
        if (lf + 1 - base > limit) {
          throw new TooLongHttpHeaderException(section + " larger than " + limit + " bytes");
        }
        return lf + 1;
      }
      lineStart = lf + 1 - base;
      from = lf + 1;
    }
  }

  private boolean readHead(ByteBuf in, List<Object> out) {
    if (scanned == 0) {
      // Stray line ends between responses are skipped (RFC 9112 §2.2 allows it for requests).
      while (in.isReadable()) {
        byte b = in.getByte(in.readerIndex());
        if (b != '\r' && b != '\n') {
          break;
        }
        in.skipBytes(1);
      }
      if (!in.isReadable()) {
        return false;
      }
    }
    int end = sectionEnd(in, maxInitialLineLength + maxHeaderSize, headSection);
    if (end < 0) {
      return false;
    }
    int length = end - in.readerIndex();
    HeaderList h = spare;
    if (h != null) {
      spare = null;
      h.reuse(length);
    } else {
      // Room for about as many fields as the head has lines (~28 bytes each), and the proxy's own.
      h = new HeaderList(new byte[length], length / 28 + addedFields, this);
    }
    in.readBytes(h.head(), 0, length);
    parseHead(h.head(), length, h, out);
    return true;
  }

  /**
   * Takes back the fields of a message this decoder made, which nobody reads any more ({@link
   * HeaderList#recycle}): the next head is decoded into them and their head array. On the
   * connection's event loop only; one set is kept.
   */
  void takeBack(HeaderList h) {
    EventExecutor l = loop;
    if (spare == null && l != null && l.inEventLoop()) {
      spare = h;
    }
  }

  /**
   * Reads the field lines of {@code b[0, n)} from {@code pos} up to the empty line into {@code h}:
   * the name up to its colon, then the value up to its line end, each found eight bytes at a time;
   * a name is a common one (a token by construction) or checked to be a token, so a colon found on
   * a later line cannot pass. Every line ends with a line feed (see {@link #sectionEnd}), which
   * stops each search; a bare one is an error ({@link #bareLineFeed}). Whitespace before the colon
   * is an error in a request and removed from a response (RFC 9112 §5.1: a server rejects it, a
   * proxy removes it from a response before forwarding it).
   */
  final void readFields(byte[] b, int pos, int n, HeaderList h) {
    while (true) {
      int j = pos;
      byte c = b[j];
      if (c == '\n') {
        throw bareLineFeed("the empty line ending a header section");
      }
      if (c == '\r' && b[j + 1] == '\n') {
        return; // the empty line: end of the section
      }
      if (c == ' ' || c == '\t') {
        throw new ProblemException("obsolete line folding in a header section");
      }
      int colon = indexOfColon(b, j, n);
      if (colon < 0) {
        throw new ProblemException("a header line without a colon: " + text(b, pos, n));
      }
      int nameEnd = colon;
      if (request && colon > pos && isOws(b[colon - 1])) {
        throw new ProblemException("whitespace between a header name and its colon");
      }
      while (nameEnd > pos && isOws(b[nameEnd - 1])) {
        nameEnd--; // RFC 9112 §5.1: whitespace before the colon is removed by a proxy
      }
      AsciiString name = FieldNames.received(b, pos, nameEnd - pos);
      boolean verbatim = nameEnd == colon;
      j = colon + 1;
      while (isOws(b[j])) {
        j++;
      }
      int valueStart = j;
      while (true) {
        j = indexOfControl(b, j, n);
        c = b[j];
        if (c != '\t') {
          break;
        }
        j++;
      }
      if (c == '\n') {
        throw bareLineFeed("a header field line");
      }
      if (c != '\r' || b[j + 1] != '\n') {
        throw new ProblemException("a control character in the value of " + text(b, pos, nameEnd));
      }
      int lineFeed = j + 1;
      int valueEnd = j;
      while (valueEnd > valueStart && isOws(b[valueEnd - 1])) {
        valueEnd--;
      }
      h.addReceived(name, valueStart, valueEnd, verbatim ? pos : -1, lineFeed + 1);
      pos = lineFeed + 1;
    }
  }

  private boolean readChunkSize(ByteBuf in) {
    int lf = in.indexOf(in.readerIndex(), in.writerIndex(), (byte) '\n');
    if (lf < 0) {
      if (in.readableBytes() > maxInitialLineLength) {
        throw new TooLongHttpLineException(
            "chunk size line longer than " + maxInitialLineLength + " bytes");
      }
      return false;
    }
    int i = in.readerIndex();
    if (lf == i || in.getByte(lf - 1) != '\r') {
      throw bareLineFeed("a chunk size line");
    }
    int end = lf - 1;
    long size = 0;
    int digits = 0;
    for (; i < end; i++) {
      int d = Character.digit(in.getByte(i), 16);
      if (d < 0) {
        break;
      }
      if (++digits > 15) {
        throw new ProblemException("chunk size too large");
      }
      size = size * 16 + d;
    }
    if (digits == 0) {
      throw new ProblemException("invalid chunk size line");
    }
    for (; i < end; i++) {
      byte b = in.getByte(i);
      if (b == ';') {
        break; // extensions: ignored
      }
      if (!isOws(b)) {
        throw new ProblemException("invalid chunk size line");
      }
    }
    for (; i < end; i++) {
      if (isControl(in.getByte(i))) {
        throw new ProblemException("a control character in a chunk extension");
      }
    }
    in.readerIndex(lf + 1);
    if (size == 0) {
      state = State.TRAILERS;
    } else {
      remaining = size;
      state = State.CHUNK_DATA;
    }
    return true;
  }

  private boolean readTrailers(ByteBuf in, List<Object> out) {
    int end = sectionEnd(in, maxHeaderSize, "trailer section");
    if (end < 0) {
      return false;
    }
    byte[] b = new byte[end - in.readerIndex()];
    in.readBytes(b);
    HeaderList trailers = new HeaderList(b, 4);
    readFields(
        b, 0, b.length, trailers); // may fail: still in TRAILERS, so the failure is the body's end
    state = State.HEAD;
    // Framing fields have no place in trailers (RFC 9110 §6.5.1).
    trailers.remove(HttpHeaderNames.CONTENT_LENGTH);
    trailers.remove(HttpHeaderNames.TRANSFER_ENCODING);
    trailers.remove(HttpHeaderNames.TRAILER);
    out.add(
        trailers.isEmpty()
            ? LastHttpContent.EMPTY_LAST_CONTENT
            : new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER, trailers));
    return true;
  }

  /** A message the decoder cannot frame or accept; its message says why. */
  static final class ProblemException extends CorruptedFrameException {
    private static final long serialVersionUID = 1L;

    ProblemException(String message) {
      super(message);
    }
  }
}
