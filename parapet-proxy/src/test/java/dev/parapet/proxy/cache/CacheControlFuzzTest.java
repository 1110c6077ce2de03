package dev.parapet.proxy.cache;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.parapet.core.time.HttpDate;
import dev.parapet.proxy.http1.HeaderList;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;

/**
 * Fuzzes the cache's header parsers: {@link CacheControl} and {@link HttpDate} (the one date parser
 * the cache reads Date, Expires, Last-Modified and If-Modified-Since with). Coverage-guided
 * counterparts of {@link ParserFuzzTest}'s seeded random values. Seeds: {@code
 * CacheControlFuzzTestInputs/cacheControl/} and {@code .../httpDate/}.
 */
class CacheControlFuzzTest {
  /** The wall clock for RFC 850's two-digit years: 2026-12-01T00:00:00Z. */
  private static final long NOW = 1_796_083_200_000L;

  /** 1601-01-01T00:00:00Z, the first instant Netty's {@link DateFormatter} accepts. */
  private static final long FIRST_NETTY_MILLIS = -11_644_473_600_000L;

  /**
   * Each input line is one Cache-Control field line (and, all together, a CDN-Cache-Control field).
   * Whatever they hold: every delta-seconds is absent or in [0, 2^31]; qualified field names are
   * lowercase and free of separators; what {@code toString} writes parses back to the same
   * directives; several field lines mean what they mean joined with commas (RFC 9110 §5.3); and the
   * parser stays conservative: an added {@code no-store} is honoured, and of repeated {@code
   * max-age}s the first counts (RFC 9111 §4.2.1).
   */
  @FuzzTest
  void cacheControl(byte[] data) {
    String all = new String(data, StandardCharsets.ISO_8859_1);
    // Several field lines as the cache reads them: values of a decoded head (a HeaderList, in
    // arrival order), so lines a decoder would refuse are left out.
    HeaderList headers = new HeaderList(4);
    List<String> lines = new ArrayList<>();
    for (String line : all.split("\n", -1)) {
      check(CacheControl.parse(line), line);
      String value = line.strip();
      try {
        headers.add(HttpHeaderNames.CACHE_CONTROL, value);
        lines.add(value);
      } catch (IllegalArgumentException notAFieldValue) {
        // a control character: no decoder passes such a value on
      }
    }
    CacheControl many = CacheControl.of(headers);
    check(many, all);
    // The same lines as a targeted field (RFC 9213: a Structured Fields dictionary whose members
    // may
    // carry parameters), read when valid, else ignored: the same invariants either way.
    HeaderList targeted = new HeaderList(4);
    for (String value : lines) {
      targeted.add(CacheControl.CDN_CACHE_CONTROL, value);
    }
    check(CacheControl.ofResponse(targeted), all);
    boolean plain = all.indexOf('"') < 0 && all.indexOf('\\') < 0;
    if (!plain) {
      return; // a quoted-string may run over a comma: joining lines changes such values
    }
    String joined = String.join(", ", lines);
    assertThat(many.toString())
        .as("field lines [%s] against their join", all)
        .isEqualTo(CacheControl.parse(joined).toString());
    assertThat(CacheControl.parse(joined + ", no-store").noStore())
        .as("[%s], no-store", joined)
        .isTrue();
    CacheControl repeated = CacheControl.parse(joined + ", max-age=1, max-age=2");
    long first = CacheControl.parse(joined).maxAge();
    assertThat(repeated.maxAge())
        .as("[%s] with two max-ages: the first occurrence counts", joined)
        .isEqualTo(first == CacheControl.ABSENT ? 1 : first);
  }

  /**
   * What any parse must hold: delta-seconds absent or in range, qualified field names lowercase
   * tokens, and {@code toString} parsing back to itself.
   */
  static void check(CacheControl cc, String value) {
    for (long d :
        new long[] {
          cc.maxAge(),
          cc.sMaxAge(),
          cc.maxStale(),
          cc.minFresh(),
          cc.staleIfError(),
          cc.staleWhileRevalidate()
        }) {
      assertThat(d)
          .as("a delta-seconds of [%s]", value)
          .isBetween(CacheControl.ABSENT, CacheControl.MAX_DELTA_SECONDS);
    }
    for (List<String> names : List.of(cc.noCacheFields(), cc.privateFields())) {
      for (String n : names) {
        assertThat(n)
            .as("a field name of [%s]", value)
            .isNotEmpty()
            .isEqualTo(n.toLowerCase(Locale.ROOT));
        assertThat(n).as("a field name of [%s]", value).doesNotContain(",", "\"", "\\", " ", "\t");
      }
    }
    assertThat(cc.noCache() && !cc.noCacheFields().isEmpty()).as("no-cache both ways").isFalse();
    assertThat(cc.isPrivate() && !cc.privateFields().isEmpty()).as("private both ways").isFalse();
    String written = cc.toString();
    assertThat(CacheControl.parse(written).toString())
        .as("[%s] written as [%s] and read again", value, written)
        .isEqualTo(written);
  }

  /**
   * Whatever the text: a date that parses is a whole second that formats and parses back to itself;
   * an IMF-fixdate means the instant written in it (its day name aside); and where Netty's own
   * lenient date parser reads an IMF-fixdate or asctime date, it reads the same instant.
   */
  @FuzzTest
  void httpDate(byte[] data) {
    String s = new String(data, StandardCharsets.ISO_8859_1);
    long t = HttpDate.parse(s, NOW);
    if (t == HttpDate.INVALID) {
      return;
    }
    assertThat(Math.floorMod(t, 1000L)).as("[%s] is whole seconds", s).isZero();
    String formatted = HttpDate.format(t);
    assertThat(HttpDate.parse(formatted, NOW)).as("[%s] as [%s]", s, formatted).isEqualTo(t);
    String v = s.strip();
    boolean leapSecond = v.contains(":60");
    if (v.length() == 29 && v.charAt(3) == ',' && !leapSecond) {
      assertThat(formatted.substring(5)).as("the instant of [%s]", s).isEqualTo(v.substring(5));
    }
    // Netty's parser reads years below 100 as 19xx or 20xx and refuses those before 1601.
    if ((v.length() == 29 || v.length() == 24) && !leapSecond && t >= FIRST_NETTY_MILLIS) {
      Date netty = DateFormatter.parseHttpDate(v);
      if (netty != null) {
        assertThat(netty.getTime()).as("Netty's reading of [%s]", s).isEqualTo(t);
      }
    }
  }
}
