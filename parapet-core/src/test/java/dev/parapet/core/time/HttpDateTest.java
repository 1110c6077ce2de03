package dev.parapet.core.time;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.LocalDate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HttpDateTest {
  private static final long NOV_6_1994 = 784_111_777_000L; // Sun, 06 Nov 1994 08:49:37 GMT

  /** Wall clock of the tests: 2023-11-14T22:13:20Z. */
  private static final long WALL = 1_700_000_000_000L;

  @Test
  void parsesTheThreeFormsOfRfc9110() {
    assertThat(HttpDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", WALL)).isEqualTo(NOV_6_1994);
    assertThat(HttpDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", WALL)).isEqualTo(NOV_6_1994);
    assertThat(HttpDate.parse("Sun Nov  6 08:49:37 1994", WALL)).isEqualTo(NOV_6_1994);
    assertThat(HttpDate.parse("  Sun, 06 Nov 1994 08:49:37 GMT\t", WALL)).isEqualTo(NOV_6_1994);
  }

  @Test
  void rfc850TwoDigitYearMoreThan50YearsAheadIsThePreviousCentury() {
    // now = 2023: "94" -> 1994 (2094 is > 50 years ahead), "30" -> 2030
    assertThat(HttpDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", WALL)).isEqualTo(NOV_6_1994);
    assertThat(HttpDate.format(HttpDate.parse("Wednesday, 06-Nov-30 08:49:37 GMT", WALL)))
        .isEqualTo("Wed, 06 Nov 2030 08:49:37 GMT");
  }

  @Test
  void parseAnyCaseMatchesNamesCaseInsensitivelyAsRfc9111AsksOfCaches() {
    assertThat(HttpDate.parseAnyCase("sun, 06 nov 1994 08:49:37 gmt", WALL)).isEqualTo(NOV_6_1994);
    assertThat(HttpDate.parseAnyCase("SUNDAY, 06-NOV-94 08:49:37 GMT", WALL)).isEqualTo(NOV_6_1994);
    assertThat(HttpDate.parseAnyCase("SUN NOV  6 08:49:37 1994", WALL)).isEqualTo(NOV_6_1994);
    assertThat(HttpDate.parse("sun, 06 nov 1994 08:49:37 gmt", WALL)).isEqualTo(HttpDate.INVALID);
    assertThat(HttpDate.parseAnyCase("Sun, 06 Nov 1994 08:49:37 UTC", WALL))
        .isEqualTo(HttpDate.INVALID);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "0",
        "-1",
        "tomorrow",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 31 Feb 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT"
      })
  void rejectsWhatIsNotAnHttpDate(String value) {
    assertThat(HttpDate.parse(value, WALL)).isEqualTo(HttpDate.INVALID);
  }

  @Test
  void formatsImfFixdateAndRoundTrips() {
    assertThat(HttpDate.format(NOV_6_1994)).isEqualTo("Sun, 06 Nov 1994 08:49:37 GMT");
    assertThat(HttpDate.format(WALL)).isEqualTo("Tue, 14 Nov 2023 22:13:20 GMT");
    assertThat(HttpDate.format(951_782_400_000L)).isEqualTo("Tue, 29 Feb 2000 00:00:00 GMT");
    // found by ParserFuzzTest: years before 1000 keep four digits
    long year63 = HttpDate.parse("Sat, 16 Jun 0063 20:02:47 GMT", WALL);
    assertThat(HttpDate.format(year63)).isEqualTo("Sat, 16 Jun 0063 20:02:47 GMT");
    for (long t = 0; t < 4_000_000_000_000L; t += 12_345_678_901L) {
      long seconds = t / 1000 * 1000;
      assertThat(HttpDate.parse(HttpDate.format(t), WALL)).isEqualTo(seconds);
    }
  }

  @Test
  void civilDateArithmeticMatchesJavaTime() {
    for (long day = -800_000; day <= 800_000; day += 997) {
      LocalDate date = LocalDate.ofEpochDay(day);
      assertThat(HttpDate.daysFromCivil(date.getYear(), date.getMonthValue(), date.getDayOfMonth()))
          .isEqualTo(day);
      assertThat(HttpDate.yearOf(day)).isEqualTo(date.getYear());
    }
  }
}
