package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.WALL;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.HttpDate;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** RFC 9110 §14 on a stored 100-byte response: one range, suffix, open-ended, 416, ignored. */
class ByteRangeTest {
  private static final CachedResponse ENTRY =
      Http.response("ETag", "\"s\"", "Last-Modified", HttpDate.format(WALL - 86_400_000L));

  @ParameterizedTest(name = "{0} if-range={1} => {2}")
  @CsvSource(
      delimiter = '|',
      nullValues = "null",
      value = {
        "bytes=0-9       | null | 0-9",
        "bytes=10-       | null | 10-99",
        "bytes=-5        | null | 95-99",
        "bytes=-500      | null | 0-99",
        "bytes=90-200    | null | 90-99",
        "BYTES = 1-1     | null | 1-1",
        "bytes=100-      | null | 416",
        "bytes=-0        | null | 416",
        "bytes=5-1       | null | full",
        "bytes=0-1,5-9   | null | full",
        "items=0-1       | null | full",
        "bytes=a-b       | null | full",
        "bytes=0-9       | \"s\" | 0-9",
        "bytes=0-9       | W/\"s\" | full",
        "bytes=0-9       | \"other\" | full",
      })
  void rangeOfAStoredResponse(String range, String ifRange, String expected) {
    ByteRange r = ByteRange.of(range, ifRange, ENTRY, 100, WALL);
    String got = r == null ? "full" : r.satisfiable() ? r.first() + "-" + r.last() : "416";
    assertThat(got).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource({"true", "false"})
  void ifRangeWithADateMatchesOnlyTheLastModified(boolean same) {
    String date = HttpDate.format(WALL - (same ? 86_400_000L : 1_000L));
    ByteRange r = ByteRange.of("bytes=0-0", date, ENTRY, 100, WALL);
    assertThat(r != null).isEqualTo(same);
  }
}
