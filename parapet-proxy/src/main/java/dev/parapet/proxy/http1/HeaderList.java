package dev.parapet.proxy.http1;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * HTTP header fields as a list in arrival order. Fields a peer sent (put here by {@link
 * Http1Decoder}, for requests and responses alike) are views into the bytes of the message head
 * ({@link AsciiString} without a copy) and remember where their line lies in it, so that unchanged
 * ones are written on as the bytes they came in ({@link #encodeTo}).
 *
 * <p>Why not Netty's {@code DefaultHttpHeaders}: it is a hash table that validates every name and
 * value again, and its values are strings copied out of the buffer. A message's dozen fields are
 * read a few times (Content-Length, Connection, Cache-Control), edited a few times (hop-by-hop
 * removal, {@code Via}, forwarding fields) and then written out. At tens of thousands of requests a
 * second that difference was several percent of the event loop and a fifth of the bytes allocated
 * per request. Lookups here are scans of int keys, which for a dozen fields is as fast as hashing.
 * Fields added through {@link HttpHeaders}' methods are validated on the way in, as Netty's headers
 * validate them; {@link Http1Decoder} validates what it puts here itself.
 */
public final class HeaderList extends DerivedHttpHeaders {
  private static final byte[] NONE = new byte[0];

  /**
   * The message head the received fields are views into: its first bytes, the rest of the array
   * being room left from an earlier, longer head when the fields are reused ({@link #recycle}).
   */
  private byte[] head;

  /** The decoder that made these fields and takes them back for its next message, or null. */
  private final @Nullable Http1Decoder owner;

  /**
   * Field i's name at {@code 2i}, its value at {@code 2i + 1}; a received value (or a number, see
   * {@link #NUMBER}) is null until first asked for (most are only ever written on as bytes), see
   * {@link #value}.
   */
  private @Nullable CharSequence[] text;

  /**
   * {@value #M} ints per field: its name's {@link FieldNames#key} (most lookups compare these ints
   * and nothing else); where its line lies in {@link #head}, CRLF included, packed as {@code start
   * << 16 | end} if it can be written as it came ({@link #NO_LINE} for fields added here or lines
   * that needed repair); where its received value lies in the head, packed the same way. A head is
   * shorter than 64 KiB ({@link Http1Decoder} refuses longer limits), so 16 bits each suffice, and
   * a message's fields cost two allocations.
   */
  private int[] meta;

  private static final int M = 3;
  private static final int NO_LINE = -1;

  /**
   * The line of a field set as a number ({@link #setInt}): its value is the number in the span's
   * place, written as digits when the fields are encoded, and made a string only if read.
   */
  private static final int NUMBER = -2;

  /**
   * The line of a field set as an id ({@link #setId}): its value is {@link #id}, written as 16
   * lower-case hex digits when the fields are encoded, and made a string only if read.
   */
  private static final int ID = -3;

  /** The value of the field set with {@link #setId} (one per message: the request's id). */
  private long id;

  /** Heads at least this long cannot be described by 16-bit offsets. */
  public static final int MAX_HEAD = 1 << 16;

  private int size;

  /** The last received value {@link #get} made a string, kept across {@link #reuse}. */
  private @Nullable String lastRead;

  /**
   * One bit per field present, at {@link FieldNames#bit} of its {@link FieldNames#key}: a lookup of
   * a name whose bit is clear ends without a scan. Most lookups are of absent fields
   * (Transfer-Encoding beside Content-Length, Keep-Alive, Via, the deadline, the hop-by-hop set),
   * asked of every message; scanning a dozen fields for each was a tenth of the event loop's own
   * time at saturation. Bits are set as fields are added and recomputed when fields are removed.
   */
  private long present;

  /** Empty headers with room for {@code capacity} fields. */
  public HeaderList(int capacity) {
    this(NONE, capacity);
  }

  /** Headers whose received fields are views into {@code head} (shorter than 64 KiB). */
  HeaderList(byte[] head, int capacity) {
    this(head, capacity, null);
  }

  /**
   * Headers whose received fields are views into {@code head}, made by {@code owner}, which takes
   * them back for its next message once they are {@link #recycle recycled}.
   */
  HeaderList(byte[] head, int capacity, @Nullable Http1Decoder owner) {
    if (head.length >= MAX_HEAD) {
      throw new IllegalArgumentException(
          "head : " + head.length + " bytes (expected: < " + MAX_HEAD + ")");
    }
    this.head = head;
    this.owner = owner;
    int n = Math.max(4, capacity);
    text = new CharSequence[2 * n];
    meta = new int[M * n];
  }

  /**
   * Appends a field the decoder checked already (name a token, value {@code head[valueStart,
   * valueEnd)} without controls) whose line is {@code head[lineStart, lineEnd)} or, with lineStart
   * -1, not to be copied as it is.
   */
  void addReceived(AsciiString name, int valueStart, int valueEnd, int lineStart, int lineEnd) {
    append(
        name,
        null,
        lineStart < 0 ? NO_LINE : lineStart << 16 | lineEnd,
        valueStart << 16 | valueEnd);
  }

  private void append(CharSequence name, @Nullable CharSequence value, int line, int span) {
    if (2 * size == text.length) {
      text = Arrays.copyOf(text, 4 * size);
      meta = Arrays.copyOf(meta, 2 * M * size);
    }
    text[2 * size] = name;
    text[2 * size + 1] = value;
    int k = FieldNames.key(name);
    meta[M * size] = k;
    present |= FieldNames.bit(k);
    meta[M * size + 1] = line;
    meta[M * size + 2] = span;
    size++;
  }

  /** The value of field {@code i}, made from the head the first time it is asked for. */
  private CharSequence value(int i) {
    CharSequence v = text[2 * i + 1];
    if (v == null) {
      int span = meta[M * i + 2];
      if (meta[M * i + 1] == NUMBER) {
        v = Integer.toString(span);
      } else if (meta[M * i + 1] == ID) {
        v = HexFormat.of().toHexDigits(id);
      } else {
        int from = span >>> 16;
        int to = span & 0xFFFF;
        v = from == to ? AsciiString.EMPTY_STRING : new AsciiString(head, from, to - from, false);
      }
      text[2 * i + 1] = v;
    }
    return v;
  }

  /** Whether field {@code i}'s value is still only bytes of the head (received, never read). */
  private boolean inHead(int i) {
    return text[2 * i + 1] == null && meta[M * i + 1] != NUMBER && meta[M * i + 1] != ID;
  }

  /**
   * Where received field {@code i}'s value lies in {@link #head()}, packed as {@code from << 16 |
   * to}: for the decoder, which reads the framing fields in place before anyone else can edit them.
   */
  int valueSpan(int i) {
    return meta[M * i + 2];
  }

  /** The message head the received fields are views into. */
  byte[] head() {
    return head;
  }

  /**
   * Says that nobody reads these fields any more, nor keeps them: the decoder that made them may
   * decode its next message into them (and into the head they are views of), so that a connection's
   * messages share one set. Called once, by the one who knows the message's end — the request's
   * flow once its client has the whole response and no attempt can send the request again; the
   * client connection once a response head is encoded — and only when nothing else holds the
   * message: a cache that stores a response or looks at a request's fields for its {@code Vary}, a
   * pipelined message waiting in a queue. Anything kept past this call would read another message's
   * fields. Fields not made by a decoder are not affected.
   */
  public void recycle() {
    Http1Decoder d = owner;
    if (d != null) {
      d.takeBack(this);
    }
  }

  /**
   * Empties the fields for the decoder's next message, {@code length} bytes long, whose head is
   * copied into {@link #head()} afterwards; the arrays are kept, the head grown if it is too short.
   */
  void reuse(int length) {
    if (head.length < length) {
      head = new byte[Math.min(MAX_HEAD - 1, Math.max(length, head.length * 2))];
    }
    clear();
  }

  private CharSequence name(int i) {
    CharSequence n = text[2 * i];
    if (n == null) {
      throw new IllegalStateException("field " + i + " : no name (expected: i < " + size + ")");
    }
    return n;
  }

  private void append(CharSequence name, CharSequence value) {
    append(name, value, NO_LINE, 0);
  }

  /**
   * Writes the fields as HTTP/1.1 header lines into {@code buf}: consecutive fields still as
   * received in one copy of their bytes, the others one by one.
   */
  public void encodeTo(ByteBuf buf) {
    int runStart = -1;
    int runEnd = -1;
    for (int i = 0; i < size; i++) {
      int line = meta[M * i + 1];
      int start = line < 0 ? -1 : line >>> 16; // NO_LINE, NUMBER, ID
      if (start >= 0 && start == runEnd) {
        runEnd = line & 0xFFFF;
        continue;
      }
      if (runStart >= 0) {
        buf.writeBytes(head, runStart, runEnd - runStart);
      }
      if (start >= 0) {
        runStart = start;
        runEnd = line & 0xFFFF;
      } else {
        runStart = -1;
        runEnd = -1;
        buf.writeCharSequence(name(i), StandardCharsets.ISO_8859_1);
        buf.writeShort((':' << 8) | ' ');
        if (line == NUMBER && text[2 * i + 1] == null) {
          FieldValues.writeDigits(buf, meta[M * i + 2]);
        } else if (line == ID && text[2 * i + 1] == null) {
          FieldValues.writeHex(buf, id);
        } else {
          buf.writeCharSequence(value(i), StandardCharsets.ISO_8859_1);
        }
        buf.writeShort(('\r' << 8) | '\n');
      }
    }
    if (runStart >= 0) {
      buf.writeBytes(head, runStart, runEnd - runStart);
    }
  }

  /** The index of the first {@code name} field at or after {@code from}, or -1. */
  int indexOf(CharSequence name, int from) {
    int k = FieldNames.key(name);
    if ((present & FieldNames.bit(k)) == 0) {
      return -1;
    }
    for (int i = from; i < size; i++) {
      if (meta[M * i] == k && AsciiString.contentEqualsIgnoreCase(name(i), name)) {
        return i;
      }
    }
    return -1;
  }

  /** The name of field {@code i} (0 to {@link #size()} - 1), as received or added. */
  public CharSequence nameAt(int i) {
    return name(i);
  }

  /** The value of field {@code i}. */
  public CharSequence valueAt(int i) {
    return value(i);
  }

  @Override
  @Nullable CharSequence first(CharSequence name) {
    int i = indexOf(name, 0);
    return i < 0 ? null : value(i);
  }

  // --- reads

  /**
   * The first {@code name} field's value as a string. A received value read first this way is made
   * a string straight from the head (and kept), not a view and then a string; or, when it is the
   * string read last, from these fields or the message before that reused them ({@link #recycle}),
   * that string: a connection's requests mostly name the same {@code Host}.
   */
  @Override
  public @Nullable String get(CharSequence name) {
    int i = indexOf(name, 0);
    if (i < 0) {
      return null;
    }
    if (inHead(i)) {
      int from = meta[M * i + 2] >>> 16;
      int length = (meta[M * i + 2] & 0xFFFF) - from;
      String last = lastRead;
      String v =
          last != null && ByteScan.sameText(last, head, from, length)
              ? last
              : new String(head, from, length, StandardCharsets.ISO_8859_1);
      lastRead = v;
      text[2 * i + 1] = v;
      return v;
    }
    return value(i).toString();
  }

  @Override
  public List<String> getAll(CharSequence name) {
    int i = indexOf(name, 0);
    if (i < 0) {
      return Collections.emptyList(); // the usual answer (Netty asks for Content-Length each time)
    }
    List<String> all = new ArrayList<>(2);
    for (; i >= 0; i = indexOf(name, i + 1)) {
      all.add(value(i).toString());
    }
    return all;
  }

  @Override
  public List<Map.Entry<String, String>> entries() {
    List<Map.Entry<String, String>> all = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      all.add(new AbstractMap.SimpleImmutableEntry<>(name(i).toString(), value(i).toString()));
    }
    return all;
  }

  @Override
  public boolean contains(CharSequence name) {
    return indexOf(name, 0) >= 0;
  }

  /** The fields as they are: views for the received ones, no copies (the encoder's way in). */
  @Override
  public Iterator<Map.Entry<CharSequence, CharSequence>> iteratorCharSequence() {
    return new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < size;
      }

      @Override
      public Map.Entry<CharSequence, CharSequence> next() {
        if (next >= size) {
          throw new NoSuchElementException();
        }
        int i = next++;
        return new AbstractMap.SimpleImmutableEntry<>(name(i), value(i));
      }
    };
  }

  @Override
  public boolean isEmpty() {
    return size == 0;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public Set<String> names() {
    Set<String> all = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    for (int i = 0; i < size; i++) {
      all.add(name(i).toString());
    }
    return all;
  }

  /**
   * The values of the {@code name} fields as they are, without a list: what Netty's {@code
   * containsValue} reads (and through it {@code HttpUtil.isKeepAlive} and {@code
   * isTransferEncodingChunked}, asked of every message). An absent field costs one scan and no
   * allocation.
   */
  @Override
  public Iterator<? extends CharSequence> valueCharSequenceIterator(CharSequence name) {
    int first = indexOf(name, 0);
    if (first < 0) {
      return Collections.emptyIterator();
    }
    return new Iterator<CharSequence>() {
      private int next = first;

      @Override
      public boolean hasNext() {
        return next >= 0;
      }

      @Override
      public CharSequence next() {
        if (next < 0) {
          throw new NoSuchElementException();
        }
        CharSequence v = value(next);
        next = indexOf(name, next + 1);
        return v;
      }
    };
  }

  /**
   * Whether a {@code name} field lists {@code value}, compared in place ({@link
   * FieldValues#lists}).
   */
  @Override
  public boolean containsValue(CharSequence name, CharSequence value, boolean ignoreCase) {
    for (int i = indexOf(name, 0); i >= 0; i = indexOf(name, i + 1)) {
      int span = meta[M * i + 2];
      if (inHead(i)
          ? FieldValues.lists(head, span >>> 16, span & 0xFFFF, value, ignoreCase)
          : FieldValues.lists(value(i), value, ignoreCase)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public boolean contains(CharSequence name, CharSequence value, boolean ignoreCase) {
    for (int i = indexOf(name, 0); i >= 0; i = indexOf(name, i + 1)) {
      CharSequence v = value(i);
      if (ignoreCase
          ? AsciiString.contentEqualsIgnoreCase(v, value)
          : AsciiString.contentEquals(v, value)) {
        return true;
      }
    }
    return false;
  }

  // --- writes (validated like Netty's headers: a token name, a value without CR, LF or NUL)

  /**
   * A header name for constants: checked to be a token once, here, and recognized by identity
   * afterwards, so that setting it does not check it again ({@link FieldNames#token}).
   *
   * @throws IllegalArgumentException if {@code name} is not a token
   */
  public static AsciiString token(String name) {
    return FieldNames.token(name);
  }

  @Override
  public HttpHeaders add(CharSequence name, Object value) {
    append(FieldNames.checked(name), FieldValues.checked(value));
    return this;
  }

  @Override
  public HttpHeaders add(CharSequence name, Iterable<?> values) {
    CharSequence n = FieldNames.checked(name);
    for (Object v : values) {
      append(n, FieldValues.checked(v));
    }
    return this;
  }

  @Override
  public HttpHeaders set(CharSequence name, Object value) {
    CharSequence n = FieldNames.checked(name);
    CharSequence v = FieldValues.checked(value);
    remove(n);
    append(n, v);
    return this;
  }

  @Override
  public HttpHeaders set(CharSequence name, Iterable<?> values) {
    remove(FieldNames.checked(name));
    return add(name, values);
  }

  /**
   * Sets a number without making it a string: its digits are written when the fields are encoded
   * (the deadline, set for every attempt, is one).
   */
  @Override
  public HttpHeaders setInt(CharSequence name, int value) {
    if (value < 0) {
      return set(name, Integer.toString(value));
    }
    CharSequence n = FieldNames.checked(name);
    remove(n);
    append(n, null, NUMBER, value);
    return this;
  }

  /**
   * Sets an id without making it a string: 16 lower-case hex digits written when the fields are
   * encoded (the request's generated {@code X-Request-Id}, which usually only goes to the wire).
   * One field of a message holds an id: setting another replaces the value of the first.
   */
  public HeaderList setId(CharSequence name, long value) {
    CharSequence n = FieldNames.checked(name);
    remove(n);
    for (int i = 0; i < size; i++) {
      if (meta[M * i + 1] == ID && text[2 * i + 1] == null) {
        text[2 * i + 1] = value(i); // the earlier id field keeps its own value
      }
    }
    id = value;
    append(n, null, ID, 0);
    return this;
  }

  @Override
  public HttpHeaders remove(CharSequence name) {
    int i = indexOf(name, 0);
    if (i < 0) {
      return this;
    }
    int k = meta[M * i];
    int kept = i;
    for (int j = i + 1; j < size; j++) {
      CharSequence n = name(j);
      if (meta[M * j] == k && AsciiString.contentEqualsIgnoreCase(n, name)) {
        continue;
      }
      text[2 * kept] = n;
      text[2 * kept + 1] = text[2 * j + 1];
      System.arraycopy(meta, M * j, meta, M * kept, M);
      kept++;
    }
    Arrays.fill(text, 2 * kept, 2 * size, null);
    size = kept;
    long bits = 0;
    for (int j = 0; j < size; j++) {
      bits |= FieldNames.bit(meta[M * j]);
    }
    present = bits;
    return this;
  }

  @Override
  public HttpHeaders clear() {
    Arrays.fill(text, 0, 2 * size, null);
    size = 0;
    present = 0;
    return this;
  }
}
