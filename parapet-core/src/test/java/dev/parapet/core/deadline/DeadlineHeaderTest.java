package dev.parapet.core.deadline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.RandomSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class DeadlineHeaderTest {

  @ParameterizedTest(name = "''{0}'' -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "4950|4950",
        "0|0",
        "' 120\t'|120",
        "000250|250",
        "86400000|86400000",
        "86400001|86400000",
        "99999999999999999999999|86400000"
      })
  void wellFormedValues(String value, long millis) {
    assertThat(DeadlineHeader.parseMillis(value)).isEqualTo(millis);
  }

  @ParameterizedTest
  @NullAndEmptySource
  @ValueSource(
      strings = {
        " ",
        "-5",
        "+5",
        "-0",
        "1.5",
        "1e3",
        "10, 20",
        "5ms",
        "0x10",
        "١٢٣",
        "NaN",
        "123456789012345678901234567890123"
      })
  void malformedValuesAreIgnored(String value) {
    assertThat(DeadlineHeader.parseMillis(value)).isEqualTo(DeadlineHeader.ABSENT);
    assertThat(DeadlineHeader.parseNanos(value)).isEqualTo(DeadlineHeader.ABSENT);
  }

  @Test
  void encodingRoundsDownAndNeverGoesNegative() {
    assertThat(DeadlineHeader.format(4_950_999_999L)).isEqualTo("4950");
    assertThat(DeadlineHeader.format(999_999L)).isEqualTo("0");
    assertThat(DeadlineHeader.format(-5_000_000L)).isEqualTo("0");
    assertThat(DeadlineHeader.format(Long.MAX_VALUE)).isEqualTo("86400000");
  }

  @Test
  void roundTripNeverPromisesMoreTime() {
    long seed = 17;
    RandomSource random = RandomSource.seeded(seed);
    for (int i = 0; i < 10_000; i++) {
      long nanos = random.nextLong(DeadlineHeader.MAX_MILLIS * 1_000_000L);
      long back = DeadlineHeader.parseNanos(DeadlineHeader.format(nanos));
      assertThat(back).as("seed %d nanos %d", seed, nanos).isLessThanOrEqualTo(nanos);
      assertThat(nanos - back).isLessThan(1_000_000L);
    }
  }
}
