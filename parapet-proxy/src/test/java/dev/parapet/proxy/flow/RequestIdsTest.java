package dev.parapet.proxy.flow;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.RandomSource;
import org.junit.jupiter.api.Test;

/** Generated ids, adopted ids and what the core's numbers name. */
class RequestIdsTest {
  @Test
  void generatedIdsAreSixteenHexDigitsOfTheNumber() {
    assertThat(RequestIds.format(0x1aL)).isEqualTo("000000000000001a");
    assertThat(RequestIds.format(-1L)).isEqualTo("ffffffffffffffff");
    assertThat(RequestIds.format(Long.MIN_VALUE)).isEqualTo("8000000000000000");
    for (long v : new long[] {1, 0xabcdefL, Long.MAX_VALUE, 0x0123456789abcdefL}) {
      assertThat(Long.parseUnsignedLong(RequestIds.format(v), 16)).isEqualTo(v);
    }
  }

  @Test
  void aTrustedIdIsNamedUntilReleasedAndUnusableOnesAreRefused() {
    RequestIds ids = new RequestIds(RandomSource.seeded(3));
    long n = ids.next();
    assertThat(n).isNotZero();
    assertThat(ids.name(n)).isEqualTo(RequestIds.format(n));
    assertThat(ids.adopt(n, "edge-1")).isTrue();
    assertThat(ids.name(n)).isEqualTo("edge-1");
    ids.release(n);
    assertThat(ids.name(n)).isEqualTo(RequestIds.format(n));
    assertThat(ids.adopt(n, "")).isFalse();
    assertThat(ids.adopt(n, "a b")).isFalse();
    assertThat(ids.adopt(n, "x".repeat(129))).isFalse();
    assertThat(ids.name(0)).isNull();
  }
}
