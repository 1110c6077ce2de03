package dev.parapet.proxy.http1;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What the decoder fuzz tests share: how a fuzzer's input becomes wire bytes cut into pieces, a run
 * of a decoder over them in an {@link EmbeddedChannel} with every buffer accounted for, and the
 * checks every decoded stream must pass whatever the input.
 *
 * <p>Input layout (so that seed files stay readable: a digit, then an HTTP message):
 *
 * <pre>
 *   byte 0, bits 0-2   how the wire is cut: 0 whole, 7 one byte at a time, 1-6 that many
 *                      piece-length bytes follow (each + 1, used in turn until the wire ends)
 *   byte 0, bit 3      small limits (64-byte start line, 256-byte head, 7-byte body pieces)
 *   byte 0, bits 6, 7  responses only: the first, the second response answers a HEAD
 *   the rest           the bytes a peer sent, then the connection closes
 * </pre>
 *
 * <p>Checks: nothing but the decoder's documented rejections ({@link
 * Http1Decoder.ProblemException}, {@link TooLongFrameException}) ever comes out, and as a decoder
 * result, never thrown; nothing follows a rejection; every buffer the decoder was given or
 * allocated is released once the messages are; a body piece is never empty and never larger than
 * the limit; each accepted head is framed as the test's own reading of RFC 9112 §6 says; and the
 * accepted messages, written out again in a canonical form, decode to the same messages.
 */
final class WireFuzz {
  /** The limits of a run: the production ones, or small ones that the fuzzer reaches easily. */
  record Limits(int initialLine, int header, int chunk) {
    static final Limits SMALL = new Limits(64, 256, 7);

    /** Room for a canonical copy of anything a fuzzer's input (4 KiB by default) decodes to. */
    static final Limits ROOMY = new Limits(15 * 1024, 48 * 1024, 64 * 1024);
  }

  /** A fuzzer's input taken apart. */
  record Input(int control, int[] pieces, Limits limits, byte[] wire) {
    static Input of(byte[] data, Limits normal) {
      if (data.length == 0) {
        return new Input(0, new int[0], normal, data);
      }
      int control = data[0] & 0xFF;
      int mode = control & 0x07;
      int lengths = mode == 7 ? 0 : Math.min(mode, data.length - 1);
      int[] pieces = new int[mode == 7 ? 1 : lengths];
      if (mode == 7) {
        pieces[0] = 1;
      }
      for (int i = 0; i < lengths; i++) {
        pieces[i] = (data[1 + i] & 0xFF) + 1;
      }
      Limits limits = (control & 0x08) != 0 ? Limits.SMALL : normal;
      return new Input(control, pieces, limits, Arrays.copyOfRange(data, 1 + lengths, data.length));
    }

    boolean bit(int b) {
      return (control & (1 << b)) != 0;
    }
  }

  /**
   * An allocator that keeps every buffer it hands out, so that a run can prove all of them were
   * released: deterministic, where Netty's leak detector reports (at any level) only when the
   * garbage collector happens to take a buffer.
   */
  static final class CountingAllocator extends AbstractByteBufAllocator {
    private final List<ByteBuf> handedOut = new ArrayList<>();

    CountingAllocator() {
      super(false);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      ByteBuf b = new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
      handedOut.add(b);
      return b;
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      return newHeapBuffer(initialCapacity, maxCapacity); // heap is enough for a decoder
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }

    void assertAllReleased() {
      for (ByteBuf b : handedOut) {
        assertThat(b.refCnt()).as("a buffer still referenced after the run: %s", b).isZero();
      }
    }
  }

  /** One decoded object, copied out of its buffers. */
  sealed interface Event {}

  /** A message head: start line, fields as they came, or the failure it stands for. */
  record Head(String startLine, List<Field> fields, int status, @Nullable Throwable failure)
      implements Event {}

  /** The connection closed: what follows was decoded at the close. */
  record Closed() implements Event {}

  /** A body piece, or the end of a body with its trailers, or a failure ending the body. */
  record Body(byte[] bytes, boolean last, List<Field> trailers, @Nullable Throwable failure)
      implements Event {}

  record Field(String name, String value) {
    @Override
    public String toString() {
      return name + ": " + value;
    }
  }

  /** How an accepted head says its body is framed. */
  enum Kind {
    /** No body: the end follows the head at once. */
    NONE,
    /** An interim (1xx) response: no body and no end, the final response is still to come. */
    INTERIM,
    FIXED,
    CHUNKED,
    /** Until the connection closes (responses only). */
    CLOSE
  }

  record Framing(Kind kind, long length) {
    static final Framing NONE = new Framing(Kind.NONE, 0);
    static final Framing INTERIM = new Framing(Kind.INTERIM, 0);
    static final Framing CHUNKED = new Framing(Kind.CHUNKED, -1);
    static final Framing CLOSE = new Framing(Kind.CLOSE, -1);

    static Framing fixed(long n) {
      return n == 0 ? NONE : new Framing(Kind.FIXED, n);
    }
  }

  /** A message decoded whole: its head, framing, body and trailers. */
  record Exchange(Head head, Framing framing, byte[] body, List<Field> trailers) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Exchange e
          && head.startLine.equals(e.head.startLine)
          && head.fields.equals(e.head.fields)
          && framing.equals(e.framing)
          && Arrays.equals(body, e.body)
          && trailers.equals(e.trailers);
    }

    @Override
    public int hashCode() {
      return head.startLine.hashCode();
    }

    @Override
    public String toString() {
      return head.startLine
          + " "
          + head.fields
          + " "
          + framing
          + " body="
          + new String(body, StandardCharsets.ISO_8859_1)
          + " trailers="
          + trailers;
    }
  }

  /** What a decoder side tells the shared checks. */
  interface Side {
    /** The handlers of a fresh channel (the decoder first) with these limits. */
    ChannelHandler[] handlers(Limits limits);

    /** Called once a fresh channel exists, before any byte arrives. */
    default void prepare(EmbeddedChannel ch) {}

    /** Called with everything a run decoded, once its channel is closed. */
    default void after(List<Event> events) {}

    /**
     * The framing an accepted head must have, from the test's reading of RFC 9112; fails the test
     * if the head should have been refused. {@code index} counts the final (non-1xx) heads.
     */
    Framing framing(Head head, int index);

    /** The head as canonical bytes, start line to the empty line. */
    default String canonicalStartLine(Head head) {
      return head.startLine;
    }
  }

  private WireFuzz() {}

  /** Decodes {@code in} with {@code side}'s decoder and runs every check. */
  static List<Exchange> check(Side side, Input in) {
    List<Event> events = run(side, in.limits(), in.wire(), in.pieces());
    Decoded d = grammar(side, events, in.limits());
    if (d.complete.isEmpty()) {
      return d.complete;
    }
    // Written out canonically, what was accepted reads back the same.
    byte[] canonical = canonical(side, d.complete);
    List<Event> again = run(side, Limits.ROOMY, canonical, new int[0]);
    Decoded d2 = grammar(side, again, Limits.ROOMY);
    assertThat(d2.failure)
        .as("the canonical form of accepted messages is refused:\n%s", text(canonical))
        .isNull();
    assertThat(d2.complete)
        .as("the canonical form decodes otherwise:\n%s", text(canonical))
        .containsExactlyElementsOf(d.complete);
    return d.complete;
  }

  /** Feeds {@code wire} in pieces, then closes; every object copied out and released. */
  static List<Event> run(Side side, Limits limits, byte[] wire, int[] pieces) {
    CountingAllocator alloc = new CountingAllocator();
    EmbeddedChannel ch = new EmbeddedChannel();
    ch.config().setAllocator(alloc);
    ch.pipeline().addLast(side.handlers(limits));
    side.prepare(ch);
    List<Event> events = new ArrayList<>();
    try {
      int from = 0;
      int p = 0;
      while (from < wire.length) {
        int n =
            pieces.length == 0
                ? wire.length
                : Math.min(pieces[p++ % pieces.length], wire.length - from);
        ByteBuf b = alloc.buffer(n).writeBytes(wire, from, n);
        from += n;
        ch.writeInbound(b); // rethrows whatever the decoder threw (wrapped in DecoderException)
        drain(ch, events);
      }
      events.add(new Closed());
      ch.finish();
      drain(ch, events);
    } finally {
      ch.finishAndReleaseAll();
    }
    alloc.assertAllReleased();
    side.after(events);
    return events;
  }

  private static void drain(EmbeddedChannel ch, List<Event> events) {
    Object o;
    while ((o = ch.readInbound()) != null) {
      try {
        events.add(event(o));
        if (o instanceof HttpRequest r
            && o instanceof LastHttpContent whole
            && r.decoderResult().isSuccess()) {
          // A request without a body comes whole: its head and its (empty) end in one message.
          events.add(new Body(new byte[0], true, fields(whole.trailingHeaders()), null));
        }
      } finally {
        ReferenceCountUtil.release(o);
      }
    }
  }

  private static Event event(Object o) {
    if (o instanceof HttpMessage m) { // before HttpContent: a refused request head is a full one
      Throwable failure = m.decoderResult().isFailure() ? m.decoderResult().cause() : null;
      if (m instanceof HttpRequest r) {
        return new Head(
            r.method().name() + " " + r.uri() + " " + r.protocolVersion().text(),
            fields(r.headers()),
            -1,
            failure);
      }
      HttpResponse r = (HttpResponse) m;
      return new Head(
          r.protocolVersion().text() + " " + r.status().code() + " " + r.status().reasonPhrase(),
          fields(r.headers()),
          r.status().code(),
          failure);
    }
    if (o instanceof HttpContent c) {
      byte[] bytes = new byte[c.content().readableBytes()];
      c.content().getBytes(c.content().readerIndex(), bytes);
      Throwable failure = c.decoderResult().isFailure() ? c.decoderResult().cause() : null;
      if (c instanceof LastHttpContent last) {
        return new Body(bytes, true, fields(last.trailingHeaders()), failure);
      }
      return new Body(bytes, false, List.of(), failure);
    }
    throw new AssertionError("the decoder passed on something else: " + o);
  }

  private static List<Field> fields(HttpHeaders h) {
    List<Field> out = new ArrayList<>(h.size());
    for (Map.Entry<String, String> e : h) {
      out.add(new Field(e.getKey(), e.getValue()));
    }
    return out;
  }

  /** The events of one run read as messages. */
  record Decoded(List<Exchange> complete, @Nullable Throwable failure) {}

  /**
   * Reads {@code events} as the grammar {@code (head body* end)* [refused head | head body*
   * failed-end | head body*]} with each accepted head's framing, checking every rule above.
   */
  static Decoded grammar(Side side, List<Event> all, Limits limits) {
    List<Event> events = new ArrayList<>(all);
    int closedAt = events.indexOf(new Closed());
    if (closedAt >= 0) {
      events.remove(closedAt);
    } else {
      closedAt = events.size();
    }
    // At the close only the end of a body running until the close may come.
    for (int k = closedAt; k < events.size(); k++) {
      assertThat(events.get(k) instanceof Body b && b.last && b.failure == null)
          .as("decoded at the close: %s", events.get(k))
          .isTrue();
    }
    List<Exchange> complete = new ArrayList<>();
    int i = 0;
    int finals = 0;
    while (i < events.size()) {
      Event e = events.get(i++);
      if (!(e instanceof Head head)) {
        throw new AssertionError("a body without a head: " + events);
      }
      if (head.failure != null) {
        assertRejection(head.failure);
        assertThat(i).as("something after a refused head: %s", events).isEqualTo(events.size());
        return new Decoded(complete, head.failure);
      }
      checkHead(head);
      Framing framing = side.framing(head, head.status >= 100 && head.status < 200 ? -1 : finals++);
      if (framing.kind == Kind.INTERIM) {
        complete.add(new Exchange(head, framing, new byte[0], List.of()));
        continue;
      }
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      Body end = null;
      while (i < events.size() && events.get(i) instanceof Body b) {
        i++;
        if (b.last) {
          end = b;
          break;
        }
        assertThat(b.bytes.length).as("a body piece's size").isBetween(1, limits.chunk());
        body.writeBytes(b.bytes);
      }
      if (end == null) {
        // The input ended inside this body: nothing may follow, and a framed body is short.
        assertThat(i).as("a head inside a body: %s", events).isEqualTo(events.size());
        assertThat(framing.kind).as("an unframed body with no end").isIn(Kind.FIXED, Kind.CHUNKED);
        if (framing.kind == Kind.FIXED) {
          assertThat((long) body.size()).as("a cut-short body").isLessThan(framing.length);
        }
        return new Decoded(complete, null);
      }
      if (end.failure != null) {
        assertRejection(end.failure);
        assertThat(framing.kind).as("a body framed by %s failed", framing).isEqualTo(Kind.CHUNKED);
        assertThat(i).as("something after a failed body: %s", events).isEqualTo(events.size());
        return new Decoded(complete, end.failure);
      }
      // A Content-Length body's last piece ends it; the other framings end with an empty end.
      assertThat(end.bytes.length)
          .as("bytes in the end of a body framed by %s", framing)
          .isBetween(0, framing.kind == Kind.FIXED ? limits.chunk() : 0);
      body.writeBytes(end.bytes);
      switch (framing.kind) {
        case NONE -> assertThat(body.size()).as("a body where the head says none").isZero();
        case FIXED ->
            assertThat((long) body.size())
                .as("body length against Content-Length")
                .isEqualTo(framing.length);
        default -> {}
      }
      if (framing.kind == Kind.CLOSE) {
        assertThat(i - 1).as("the end of a body running until the close").isEqualTo(closedAt);
      } else {
        assertThat(i - 1)
            .as("the end of a body framed by %s at the close", framing)
            .isLessThan(closedAt);
      }
      if (framing.kind != Kind.CHUNKED) {
        assertThat(end.trailers).as("trailers outside chunked coding").isEmpty();
      }
      for (Field t : end.trailers) {
        assertThat(t.name.toLowerCase(Locale.ROOT))
            .as("a framing field among trailers")
            .isNotIn("content-length", "transfer-encoding", "trailer");
        checkField(t);
      }
      complete.add(new Exchange(head, framing, body.toByteArray(), end.trailers));
    }
    return new Decoded(complete, null);
  }

  private static void assertRejection(Throwable cause) {
    assertThat(cause)
        .as("a rejection's cause")
        .isInstanceOfAny(Http1Decoder.ProblemException.class, TooLongFrameException.class);
  }

  /** What an accepted head's fields hold: token names, values without controls or outer OWS. */
  private static void checkHead(Head head) {
    for (Field f : head.fields) {
      checkField(f);
    }
  }

  private static void checkField(Field f) {
    assertThat(f.name).as("a field name").isNotEmpty();
    for (int k = 0; k < f.name.length(); k++) {
      assertThat(isTchar(f.name.charAt(k))).as("a token character in name %s", f.name).isTrue();
    }
    String v = f.value;
    for (int k = 0; k < v.length(); k++) {
      char c = v.charAt(k);
      assertThat((c >= 0x20 && c != 0x7F && c <= 0xFF) || c == '\t')
          .as("a control character in the value of %s", f.name)
          .isTrue();
    }
    if (!v.isEmpty()) {
      assertThat(isOws(v.charAt(0)) || isOws(v.charAt(v.length() - 1)))
          .as("whitespace around the value of %s: [%s]", f.name, v)
          .isFalse();
    }
  }

  static boolean isTchar(char c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
  }

  static boolean isOws(char c) {
    return c == ' ' || c == '\t';
  }

  /** The values of every {@code name} field, in order. */
  static List<String> values(Head head, String name) {
    List<String> out = new ArrayList<>();
    for (Field f : head.fields) {
      if (f.name.equalsIgnoreCase(name)) {
        out.add(f.value);
      }
    }
    return out;
  }

  /**
   * The messages written as a careful sender would: the start line, one {@code name: value} line
   * per field, and the body as its framing says (one chunk per piece for chunked coding, the
   * trailers after the last).
   */
  static byte[] canonical(Side side, List<Exchange> exchanges) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Exchange x : exchanges) {
      StringBuilder s = new StringBuilder(side.canonicalStartLine(x.head)).append("\r\n");
      for (Field f : x.head.fields) {
        s.append(f.name).append(": ").append(f.value).append("\r\n");
      }
      s.append("\r\n");
      write(out, s);
      switch (x.framing.kind) {
        case FIXED, CLOSE -> out.writeBytes(x.body);
        case CHUNKED -> {
          if (x.body.length > 0) {
            write(out, Integer.toHexString(x.body.length) + "\r\n");
            out.writeBytes(x.body);
            write(out, "\r\n");
          }
          StringBuilder t = new StringBuilder("0\r\n");
          for (Field f : x.trailers) {
            t.append(f.name).append(": ").append(f.value).append("\r\n");
          }
          write(out, t.append("\r\n"));
        }
        default -> {}
      }
    }
    return out.toByteArray();
  }

  private static void write(ByteArrayOutputStream out, CharSequence s) {
    out.writeBytes(s.toString().getBytes(StandardCharsets.ISO_8859_1));
  }

  static String text(byte[] b) {
    return new String(b, StandardCharsets.ISO_8859_1);
  }
}
