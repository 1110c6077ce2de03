package dev.parapet.proxy.http1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Origin headers behave as Netty's headers do, and write untouched fields as they came. */
class HeaderListTest {

  /** Headers as the decoder builds them from {@code lines} ("Name: value" each, CRLF added). */
  private static HeaderList received(String... lines) {
    String head = String.join("\r\n", lines) + "\r\n";
    byte[] b = head.getBytes(StandardCharsets.ISO_8859_1);
    HeaderList h = new HeaderList(b, 2);
    int pos = 0;
    for (String line : lines) {
      int colon = line.indexOf(':');
      AsciiString name = new AsciiString(b, pos, colon, false);
      h.addReceived(name, pos + colon + 2, pos + line.length(), pos, pos + line.length() + 2);
      pos += line.length() + 2;
    }
    return h;
  }

  private static String encoded(HeaderList h) {
    ByteBuf buf = Unpooled.buffer();
    h.encodeTo(buf);
    String s = buf.toString(StandardCharsets.ISO_8859_1);
    buf.release();
    return s;
  }

  @Test
  void readsAreCaseInsensitiveAndInOrder() {
    HeaderList h = received("Server: a", "Set-Cookie: x=1", "set-cookie: y=2", "Age: 7");
    assertThat(h.get("SERVER")).isEqualTo("a");
    assertThat(h.get(HttpHeaderNames.SET_COOKIE)).isEqualTo("x=1");
    assertThat(h.getAll("Set-Cookie")).containsExactly("x=1", "y=2");
    assertThat(h.getInt("age")).isEqualTo(7);
    assertThat(h.getInt("server")).isNull();
    assertThat(h.contains("AGE")).isTrue();
    assertThat(h.contains("Via")).isFalse();
    assertThat(h.size()).isEqualTo(4);
    assertThat(h.names()).hasSize(3);
    List<String> seen = new ArrayList<>();
    for (Map.Entry<String, String> e : h) {
      seen.add(e.getKey() + "=" + e.getValue());
    }
    assertThat(seen).containsExactly("Server=a", "Set-Cookie=x=1", "set-cookie=y=2", "Age=7");
  }

  @Test
  void untouchedFieldsAreWrittenAsReceivedAndEditsAfterThem() {
    HeaderList h =
        received("Server: a", "Connection: keep-alive", "ETag: \"v\"", "Via: 1.1 origin");
    h.remove("connection");
    h.set("Via", "1.1 origin, 1.1 edge");
    h.add("X-Cache", "miss");
    assertThat(encoded(h))
        .isEqualTo("Server: a\r\nETag: \"v\"\r\nVia: 1.1 origin, 1.1 edge\r\nX-Cache: miss\r\n");
  }

  @Test
  void wholeValueContainsAndAbsentFieldsMatchNettys() {
    HeaderList h = received("Expect: 100-Continue", "X-A: a, b");
    HttpHeaders theirs = new DefaultHttpHeaders().add("Expect", "100-Continue").add("X-A", "a, b");
    for (String[] q :
        new String[][] {{"expect", "100-continue"}, {"X-A", "a"}, {"X-A", "a, b"}, {"Via", "x"}}) {
      for (boolean ignoreCase : new boolean[] {true, false}) {
        assertThat(h.contains(q[0], q[1], ignoreCase))
            .as("%s %s %s", q[0], q[1], ignoreCase)
            .isEqualTo(theirs.contains(q[0], q[1], ignoreCase));
      }
    }
    assertThat(h.getAll("Content-Length")).isEmpty();
  }

  @Test
  void anOriginCodecWhoseHeadsCouldOutgrowSixteenBitOffsetsIsRefused() {
    assertThatThrownBy(() -> OriginCodec.handlers(8192, 64 * 1024, 8192))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("16-bit");
  }

  @Test
  void containsValueLooksThroughListsLikeNettys() {
    HeaderList h = received("Connection: Keep-Alive, Upgrade", "Transfer-Encoding: chunked");
    assertThat(h.containsValue("connection", "upgrade", true)).isTrue();
    assertThat(h.containsValue("connection", "upgrade", false)).isFalse();
    assertThat(h.containsValue("Transfer-Encoding", "chunked", true)).isTrue();
    assertThat(h.containsValue("Transfer-Encoding", "gzip", true)).isFalse();
    assertThat(h.containsValue("Via", "x", true)).isFalse();

    // One element per field (compared in place) and several fields (Netty's matching), each
    // against DefaultHttpHeaders holding the same fields.
    String[][] cases = {
      {"close"}, {"Close"}, {"closed"}, {"keep-alive", "close"}, {"a,close"}, {"", "CLOSE"}
    };
    for (String[] values : cases) {
      HeaderList mine = new HeaderList(2);
      HttpHeaders theirs = new DefaultHttpHeaders();
      for (String v : values) {
        mine.add("Connection", v);
        theirs.add("Connection", v);
      }
      for (boolean ignoreCase : new boolean[] {true, false}) {
        assertThat(mine.containsValue("connection", "close", ignoreCase))
            .as("%s ignoreCase %s", String.join("|", values), ignoreCase)
            .isEqualTo(theirs.containsValue("connection", "close", ignoreCase));
      }
    }
  }

  @Test
  void numbersSetAsIntsAreWrittenAsDigitsAndReadAsStrings() {
    HeaderList h = received("Host: a");
    h.setInt("Parapet-Deadline", 4950);
    h.setInt("Zero", 0);
    h.setInt("Below", -7);
    assertThat(encoded(h))
        .isEqualTo("Host: a\r\nParapet-Deadline: 4950\r\nZero: 0\r\nBelow: -7\r\n");
    assertThat(h.get("parapet-deadline")).isEqualTo("4950");
    assertThat(h.getInt("Parapet-Deadline")).isEqualTo(4950);
    h.setInt("Parapet-Deadline", Integer.MAX_VALUE);
    assertThat(encoded(h))
        .isEqualTo("Host: a\r\nZero: 0\r\nBelow: -7\r\nParapet-Deadline: 2147483647\r\n");
    assertThatThrownBy(() -> h.setInt("Bad Name", 1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void idsAreWrittenAsSixteenHexDigitsAndReadAsStrings() {
    HeaderList h = received("Host: a");
    h.setId("X-Request-Id", 0x00ab_cdef_0123_4567L);
    assertThat(encoded(h)).isEqualTo("Host: a\r\nX-Request-Id: 00abcdef01234567\r\n");
    h.setId("X-Request-Id", -1L);
    h.add("After", "b");
    assertThat(encoded(h)).isEqualTo("Host: a\r\nX-Request-Id: ffffffffffffffff\r\nAfter: b\r\n");
    h.setId("Other-Id", 1L); // a second id field: the first keeps its value
    assertThat(h.get("x-request-id")).isEqualTo("ffffffffffffffff");
    assertThat(h.get("Other-Id")).isEqualTo("0000000000000001");
    assertThat(encoded(h))
        .isEqualTo(
            "Host: a\r\nX-Request-Id: ffffffffffffffff\r\nAfter: b\r\nOther-Id: 0000000000000001\r\n");
    assertThatThrownBy(() -> h.setId("Bad Name", 1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aReceivedValueMatchesTheSameInPlaceAndOnceReadAsAString() {
    HeaderList h = received("Connection: keep-alive, Upgrade", "Host: example.com");
    assertThat(h.containsValue("Connection", "upgrade", true)).isTrue(); // the head's bytes
    assertThat(h.containsValue("Connection", "upgrade", false)).isFalse();
    assertThat(h.get("Connection")).isEqualTo("keep-alive, Upgrade");
    assertThat(h.containsValue("Connection", "upgrade", true)).isTrue(); // the string kept
    assertThat(h.containsValue("Connection", "close", true)).isFalse();
    assertThat(h.get("host")).isSameAs(h.get("HOST"));
    assertThat(encoded(h)).isEqualTo("Connection: keep-alive, Upgrade\r\nHost: example.com\r\n");
  }

  @Test
  void addedFieldsAreWrittenAsNettyWritesThem() {
    String longValue = "v".repeat(300);
    HeaderList h = new HeaderList(4);
    h.add(HttpHeaderNames.VIA, "1.1 edge");
    h.add("X-Obs", "caf\u00e9 \u00ff");
    h.add(new AsciiString("X-Ascii"), new StringBuilder("sb, ").append(42));
    h.add("X-Long", longValue);
    h.add(AsciiString.of("X-Empty"), "");
    ByteBuf theirs = Unpooled.buffer();
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence();
        it.hasNext(); ) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      theirs.writeCharSequence(e.getKey(), StandardCharsets.ISO_8859_1);
      theirs.writeCharSequence(": ", StandardCharsets.ISO_8859_1);
      theirs.writeCharSequence(e.getValue(), StandardCharsets.ISO_8859_1);
      theirs.writeCharSequence("\r\n", StandardCharsets.ISO_8859_1);
    }
    String expected = theirs.toString(StandardCharsets.ISO_8859_1);
    theirs.release();
    assertThat(encoded(h))
        .isEqualTo(expected)
        .startsWith("via: 1.1 edge\r\nX-Obs: caf\u00e9 \u00ff\r\nX-Ascii: sb, 42\r\n")
        .endsWith("X-Long: " + longValue + "\r\nX-Empty: \r\n");
  }

  @Test
  void numbersReadLikeNettysNullWhenOutOfRangeOrNotANumber() {
    String[] values = {"7", "-12", "+5", "70000", "99999999999", "1.5", "", "x"};
    for (String v : values) {
      HeaderList mine = new HeaderList(2);
      HttpHeaders theirs = new DefaultHttpHeaders();
      mine.add("N", v);
      theirs.add("N", v);
      assertThat(mine.getInt("n")).as("int %s", v).isEqualTo(theirs.getInt("n"));
      assertThat(mine.getShort("n")).as("short %s", v).isEqualTo(theirs.getShort("n"));
    }
    assertThat(new HeaderList(2).getInt("n", 3)).isEqualTo(3);
  }

  @Test
  void addedFieldsAreValidatedAsNettyValidatesThem() {
    HeaderList h = received("Server: a");
    assertThatThrownBy(() -> h.add("X-Bad", "a\r\nInjected: 1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> h.set("Bad Name", "v")).isInstanceOf(IllegalArgumentException.class);
    assertThat(encoded(h)).isEqualTo("Server: a\r\n");
  }

  @Test
  void tokensAreCheckedOnceWhenMade() {
    assertThatThrownBy(() -> HeaderList.token("Bad Name"))
        .isInstanceOf(IllegalArgumentException.class);
    AsciiString t = HeaderList.token("X-Checked-Once");
    HeaderList h = new HeaderList(2);
    h.set(t, "1").add(new AsciiString("x-checked-once"), "2");
    assertThat(h.getAll("X-CHECKED-ONCE")).containsExactly("1", "2");
    assertThat(encoded(h)).isEqualTo("X-Checked-Once: 1\r\nx-checked-once: 2\r\n");
    // The same characters in another object are checked again, like any other name.
    assertThatThrownBy(() -> h.set(new AsciiString("X-Checked Once"), "v"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aRandomSequenceOfEditsMatchesDefaultHttpHeaders() {
    // Property test as a seeded random sequence: the same edits on both, the same reads after.
    // Names differ in case, and there are more than the 64 bits of the list's presence mask, so
    // lookups meet both clear bits and bits shared by other names.
    List<String> pool = new ArrayList<>(List.of("A", "a", "b", "Set-Cookie", "SET-COOKIE", "Via"));
    for (int i = 0; i < 80; i++) {
      pool.add("x-" + Integer.toString(i * 7919, 36));
    }
    String[] names = pool.toArray(String[]::new);
    for (long seed = 1; seed <= 200; seed++) {
      Random r = new Random(seed);
      HeaderList mine = received("A: 0", "Set-Cookie: s0", "b: 0");
      HttpHeaders theirs = new DefaultHttpHeaders();
      theirs.add("A", "0").add("Set-Cookie", "s0").add("b", "0");
      for (int step = 0; step < 12; step++) {
        String name = names[r.nextInt(names.length)];
        String value = "v" + r.nextInt(5);
        switch (r.nextInt(step == 6 && seed % 10 == 0 ? 5 : 4)) {
          case 4 -> {
            mine.clear();
            theirs.clear();
          }
          case 0 -> {
            mine.add(name, value);
            theirs.add(name, value);
          }
          case 1 -> {
            mine.set(name, value);
            theirs.set(name, value);
          }
          case 2 -> {
            mine.remove(name);
            theirs.remove(name);
          }
          default -> {
            mine.setInt(name, step);
            theirs.setInt(name, step);
          }
        }
        for (String n : names) {
          assertThat(mine.getAll(n)).as("seed %d, %s", seed, n).isEqualTo(theirs.getAll(n));
          assertThat(mine.get(n)).isEqualTo(theirs.get(n));
          assertThat(mine.contains(n)).isEqualTo(theirs.contains(n));
        }
        assertThat(mine.size()).isEqualTo(theirs.size());
      }
      // What is written parses back to the same fields.
      String text = encoded(mine);
      HttpHeaders back = new DefaultHttpHeaders();
      for (String line : text.split("\r\n")) {
        if (!line.isEmpty()) {
          int colon = line.indexOf(':');
          back.add(line.substring(0, colon), line.substring(colon + 2));
        }
      }
      for (String n : names) {
        assertThat(back.getAll(n)).isEqualTo(theirs.getAll(n));
      }
    }
  }
}
