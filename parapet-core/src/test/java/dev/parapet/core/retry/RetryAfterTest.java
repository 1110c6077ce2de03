package dev.parapet.core.retry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.RandomSource;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class RetryAfterTest {
  private static final long SECOND = 1_000_000_000L;
  // 1994-11-06T08:49:00Z: 37 s before the RFC's example date
  private static final long NOW =
      ZonedDateTime.of(1994, 11, 6, 8, 49, 0, 0, ZoneOffset.UTC).toInstant().toEpochMilli();

  @Test
  void delaySeconds() {
    assertThat(RetryAfter.parseNanos("120", NOW)).isEqualTo(120 * SECOND);
    assertThat(RetryAfter.parseNanos("0", NOW)).isZero();
    assertThat(RetryAfter.parseNanos(" \t5 ", NOW)).isEqualTo(5 * SECOND);
    assertThat(RetryAfter.parseNanos("007", NOW)).isEqualTo(7 * SECOND);
  }

  @Test
  void hugeValuesAreClamped() {
    assertThat(RetryAfter.parseNanos("86401", NOW)).isEqualTo(RetryAfter.MAX_SECONDS * SECOND);
    assertThat(RetryAfter.parseNanos("9".repeat(400), NOW))
        .isEqualTo(RetryAfter.MAX_SECONDS * SECOND);
    assertThat(RetryAfter.parseNanos("Sun, 06 Nov 2094 08:49:37 GMT", NOW))
        .isEqualTo(RetryAfter.MAX_SECONDS * SECOND);
  }

  @ParameterizedTest
  @NullAndEmptySource
  @ValueSource(
      strings = {
        " ",
        "-5",
        "+5",
        "1.5",
        "5s",
        "5 6",
        "1,2",
        "0x10",
        "soon",
        "Sun, 06 Nov 1994 08:49:37 UTC", // zone must be GMT
        "Sun, 06 Nov 1994 08:49:37 gmt",
        "sun, 06 Nov 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT", // no 31 November
        "Sun, 29 Feb 1995 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nox 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT ;",
        "Sunday, 06-Nov-94 08:49:37 UTC",
        "Sun Nov 6 08:49:37 1994",
        "Sun Nov  6 08-49-37 1994"
      })
  void malformedIsAbsent(String value) {
    assertThat(RetryAfter.parseNanos(value, NOW)).isEqualTo(RetryAfter.ABSENT);
  }

  @Test
  void allThreeDateFormsOfRfc9110() {
    assertThat(RetryAfter.parseNanos("Sun, 06 Nov 1994 08:49:37 GMT", NOW)).isEqualTo(37 * SECOND);
    assertThat(RetryAfter.parseNanos("Sunday, 06-Nov-94 08:49:37 GMT", NOW)).isEqualTo(37 * SECOND);
    assertThat(RetryAfter.parseNanos("Sun Nov  6 08:49:37 1994", NOW)).isEqualTo(37 * SECOND);
    assertThat(RetryAfter.parseNanos("Sun Nov 06 08:49:37 1994", NOW)).isEqualTo(37 * SECOND);
  }

  @Test
  void dateInThePastMeansNow() {
    assertThat(RetryAfter.parseNanos("Sat, 05 Nov 1994 08:49:37 GMT", NOW)).isZero();
  }

  @Test
  void twoDigitYearMoreThanFiftyYearsAheadIsLastCentury() {
    long now2030 =
        ZonedDateTime.of(2030, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).toInstant().toEpochMilli();
    // "94" read as 2094 would be 64 years ahead, so it is 1994: in the past, delay 0
    assertThat(RetryAfter.parseNanos("Sunday, 06-Nov-94 08:49:37 GMT", now2030)).isZero();
    // "30" is 2030, one hour ahead
    assertThat(RetryAfter.parseNanos("Tuesday, 01-Jan-30 01:00:00 GMT", now2030))
        .isEqualTo(3600 * SECOND);
  }

  /** Property: IMF-fixdate agrees with java.time for random instants. */
  @Test
  void imfFixdateMatchesJavaTime() {
    long seed = 3;
    RandomSource random = RandomSource.seeded(seed);
    DateTimeFormatter imf =
        DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);
    for (int i = 0; i < 5_000; i++) {
      long secondsSinceEpoch = random.nextLong(4_102_444_800L); // 1970 .. 2100
      String value = imf.format(java.time.Instant.ofEpochSecond(secondsSinceEpoch));
      long nowMillis = secondsSinceEpoch * 1000 - random.nextLong(3_600_000);
      long expected =
          Math.min(secondsSinceEpoch * 1000 - nowMillis, RetryAfter.MAX_SECONDS * 1000)
              * 1_000_000L;
      assertThat(RetryAfter.parseNanos(value, nowMillis))
          .as("seed %d value %s", seed, value)
          .isEqualTo(expected);
    }
  }
}
