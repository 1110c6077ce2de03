package dev.parapet.proxy.http1;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.parapet.proxy.http1.WireFuzz.Field;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaderValidationUtil;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Fuzzes {@link HeaderList} against a model: a plain list of name-value pairs, with Netty's own
 * {@code DefaultHttpHeaders} built from it as the reference for what {@link HttpHeaders}' methods
 * answer.
 *
 * <p>Input: a header section (lines up to the first empty line), read by the response decoder as an
 * origin's fields, then one operation per line:
 *
 * <pre>
 *   a NAME:VALUE   add          s NAME:VALUE   set           r NAME   remove
 *   v NAME:VALUE   containsValue, ignoring case   V NAME:VALUE   the same, exact
 *   h NAME:VALUE   contains(name, value, ignoring case)      c        clear
 *   e              encode, and decode what was written
 * </pre>
 *
 * <p>After every operation every read ({@code get}, {@code getAll}, {@code contains}, {@code
 * names}, {@code entries}, the iterators, {@code size}) agrees with the model. An add or set either
 * refuses with {@link IllegalArgumentException} and changes nothing, or takes a token name and a
 * value without CR, LF or NUL (nothing can be smuggled into a head). What {@link
 * HeaderList#encodeTo} writes, fields received verbatim and fields edited alike, decodes to the
 * model's fields. Seeds: {@code HeaderListFuzzTestInputs/headerList/}.
 */
class HeaderListFuzzTest {

  @FuzzTest
  void headerList(byte[] data) {
    int end = sectionEnd(data);
    byte[] section =
        end < 0
            ? (new String(data, StandardCharsets.ISO_8859_1) + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1)
            : Arrays.copyOf(data, end);
    HeaderList h = decode(section);
    if (h == null) {
      return; // refused by the decoder: the decoder tests cover that
    }
    List<Field> model = new ArrayList<>();
    for (int i = 0; i < h.size(); i++) {
      model.add(new Field(h.nameAt(i).toString(), h.valueAt(i).toString()));
    }
    agree(h, model, "after decoding");
    if (end < 0) {
      return;
    }
    String ops = new String(data, end, data.length - end, StandardCharsets.ISO_8859_1);
    for (String line : ops.split("\n", -1)) {
      if (line.isEmpty()) {
        continue;
      }
      char op = line.charAt(0);
      String arg = line.substring(1).stripLeading();
      int colon = arg.indexOf(':');
      String name = colon < 0 ? arg : arg.substring(0, colon);
      String value = colon < 0 ? "" : arg.substring(colon + 1);
      switch (op) {
        case 'a', 's' -> write(h, model, op == 's', name, value);
        case 'r' -> {
          h.remove(name);
          model.removeIf(f -> f.name().equalsIgnoreCase(name));
        }
        case 'c' -> {
          h.clear();
          model.clear();
        }
        case 'v', 'V' -> {
          if (value.isEmpty()) {
            continue; // the empty element: Netty's list split drops a trailing one, nobody asks
          }
          assertThat(h.containsValue(name, value, op == 'v'))
              .as("containsValue(%s, %s, %s) of %s", name, value, op == 'v', model)
              .isEqualTo(reference(model).containsValue(name, value, op == 'v'));
        }
        case 'h' ->
            assertThat(h.contains(name, value, true))
                .as("contains(%s, %s) of %s", name, value, model)
                .isEqualTo(reference(model).contains(name, value, true));
        case 'e' -> encodeAndDecode(h, model);
        default -> {}
      }
      agree(h, model, "after [" + line + "]");
    }
    encodeAndDecode(h, model);
  }

  private static void write(
      HeaderList h, List<Field> model, boolean set, String name, String value) {
    try {
      if (set) {
        h.set(name, value);
      } else {
        h.add(name, value);
      }
    } catch (IllegalArgumentException refused) {
      return; // the model stays as it was, and agree() checks the list did too
    }
    assertThat(!name.isEmpty() && HttpHeaderValidationUtil.validateToken(name) < 0)
        .as("an accepted name is a token: [%s]", name)
        .isTrue();
    assertThat(value.chars().noneMatch(c -> c == '\r' || c == '\n' || c == 0))
        .as("an accepted value has no CR, LF or NUL: [%s]", value)
        .isTrue();
    if (set) {
      model.removeIf(f -> f.name().equalsIgnoreCase(name));
    }
    model.add(new Field(name, value));
  }

  /** Every read of {@code h} against the model and Netty's headers built from it. */
  private static void agree(HeaderList h, List<Field> model, String when) {
    assertThat(h.size()).as("size %s", when).isEqualTo(model.size());
    assertThat(h.isEmpty()).isEqualTo(model.isEmpty());
    List<Field> listed = new ArrayList<>();
    for (Map.Entry<String, String> e : h.entries()) {
      listed.add(new Field(e.getKey(), e.getValue()));
    }
    assertThat(listed).as("entries %s", when).containsExactlyElementsOf(model);
    List<Field> viewed = new ArrayList<>();
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence();
        it.hasNext(); ) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      viewed.add(new Field(e.getKey().toString(), e.getValue().toString()));
    }
    assertThat(viewed).as("iteratorCharSequence %s", when).containsExactlyElementsOf(model);
    HttpHeaders ref = reference(model);
    Set<String> names = new LinkedHashSet<>();
    for (Field f : model) {
      names.add(f.name().toLowerCase(Locale.ROOT));
    }
    assertThat(lower(h.names())).as("names %s", when).isEqualTo(names);
    names.add("x-absent");
    names.add("content-length");
    for (String n : names) {
      for (String asked : new String[] {n, n.toUpperCase(Locale.ROOT)}) {
        assertThat(h.get(asked)).as("get(%s) %s", asked, when).isEqualTo(ref.get(asked));
        assertThat(h.getAll(asked)).as("getAll(%s) %s", asked, when).isEqualTo(ref.getAll(asked));
        assertThat(h.contains(asked))
            .as("contains(%s) %s", asked, when)
            .isEqualTo(ref.contains(asked));
        assertThat(h.contains(new AsciiString(asked)))
            .as("contains(AsciiString %s) %s", asked, when)
            .isEqualTo(ref.contains(asked));
        List<String> values = new ArrayList<>();
        h.valueCharSequenceIterator(asked).forEachRemaining(v -> values.add(v.toString()));
        assertThat(values)
            .as("valueCharSequenceIterator(%s) %s", asked, when)
            .isEqualTo(ref.getAll(asked));
      }
    }
  }

  private static Set<String> lower(Set<String> names) {
    Set<String> out = new LinkedHashSet<>();
    for (String n : names) {
      out.add(n.toLowerCase(Locale.ROOT));
    }
    return out;
  }

  /** Netty's headers holding the model's fields, unvalidated (the model may hold anything). */
  private static HttpHeaders reference(List<Field> model) {
    HttpHeaders ref = DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
    for (Field f : model) {
      ref.add(f.name(), f.value());
    }
    return ref;
  }

  /**
   * What {@link HeaderList#encodeTo} writes decodes to the model's fields (values without the
   * whitespace a decoder strips from their ends).
   */
  private static void encodeAndDecode(HeaderList h, List<Field> model) {
    ByteBuf buf = Unpooled.buffer();
    try {
      h.encodeTo(buf);
      byte[] written = new byte[buf.readableBytes()];
      buf.readBytes(written);
      byte[] section = new byte[written.length + 2];
      System.arraycopy(written, 0, section, 0, written.length);
      section[written.length] = '\r';
      section[written.length + 1] = '\n';
      HeaderList again = decode(section);
      String shown = new String(section, StandardCharsets.ISO_8859_1);
      assertThat(again).as("what encodeTo wrote is refused:\n%s", shown).isNotNull();
      List<Field> decoded = new ArrayList<>();
      for (int i = 0; i < again.size(); i++) {
        decoded.add(new Field(again.nameAt(i).toString(), again.valueAt(i).toString()));
      }
      List<Field> expected = new ArrayList<>();
      for (Field f : model) {
        expected.add(new Field(f.name(), f.value().strip()));
      }
      assertThat(decoded).as("what encodeTo wrote:\n%s", shown).containsExactlyElementsOf(expected);
    } finally {
      buf.release();
    }
  }

  /** Where the first empty line of {@code b} ends (as the decoder finds it), or -1. */
  private static int sectionEnd(byte[] b) {
    int line = 0;
    for (int i = 0; i < b.length; i++) {
      if (b[i] == '\n') {
        if (i == line || (i == line + 1 && b[line] == '\r')) {
          return i + 1;
        }
        line = i + 1;
      }
    }
    return -1;
  }

  /** The fields of {@code section} as the response decoder reads them, or null if refused. */
  private static @Nullable HeaderList decode(byte[] section) {
    ArrayDeque<HttpMethod> methods = new ArrayDeque<>();
    methods.add(HttpMethod.HEAD); // no body: the head is all there is
    EmbeddedChannel ch =
        new EmbeddedChannel(new OriginCodec.ResponseDecoder(8192, 48 * 1024, 8192, methods));
    ByteBuf wire = Unpooled.buffer(section.length + 17);
    wire.writeBytes("HTTP/1.1 200 OK\r\n".getBytes(StandardCharsets.US_ASCII)).writeBytes(section);
    try {
      ch.writeInbound(wire);
      Object first = ch.readInbound();
      try {
        if (first instanceof HttpResponse r && r.decoderResult().isSuccess()) {
          return (HeaderList) r.headers();
        }
        return null;
      } finally {
        ReferenceCountUtil.release(first);
      }
    } finally {
      ch.finishAndReleaseAll();
    }
  }
}
