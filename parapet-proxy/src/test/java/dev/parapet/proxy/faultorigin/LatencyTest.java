package dev.parapet.proxy.faultorigin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.RandomSource;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LatencyTest {
  private static final long MS = 1_000_000L;

  @ParameterizedTest
  @ValueSource(
      strings = {
        "none",
        "fixed:50ms",
        "fixed:0ms",
        "uniform:10ms-200ms",
        "lognormal:120ms,4s",
        "bimodal:90%:20ms,2s",
        "fixed:1500us",
        "fixed:2m"
      })
  void textReadsBackToTheSameDistribution(String text) {
    Latency latency = Latency.parse("latency", text);

    assertThat(latency.text()).isEqualTo(text);
    assertThat(Latency.parse("latency", latency.text())).isEqualTo(latency);
  }

  @Test
  void decimalsAndUnitsAreExact() {
    assertThat(Latency.parse("latency", "fixed:1.5s")).isEqualTo(new Latency.Fixed(1500 * MS));
    assertThat(Latency.parse("latency", "FIXED:250us")).isEqualTo(new Latency.Fixed(250_000));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "fixd:50ms",
        "fixed:50",
        "fixed:-5ms",
        "uniform:200ms-10ms",
        "uniform:10ms",
        "lognormal:4s,120ms",
        "lognormal:0ms,1s",
        "bimodal:90:20ms,2s",
        "bimodal:150%:20ms,2s",
        "fixed:25h",
        "none:5ms"
      })
  void badTextSaysWhatWasExpectedAndWhatWasFound(String text) {
    assertThatThrownBy(() -> Latency.parse("--latency", text))
        .isInstanceOf(PlanException.class)
        .hasMessageStartingWith("--latency: expected " + Latency.SYNTAX + ", found '" + text + "'");
  }

  @Test
  void fixedAndUniformStayInTheirBounds() {
    RandomSource random = RandomSource.seeded(1);
    assertThat(new Latency.Fixed(7 * MS).sampleNanos(random)).isEqualTo(7 * MS);
    Latency uniform = new Latency.Uniform(10 * MS, 20 * MS);
    for (int i = 0; i < 10_000; i++) {
      assertThat(uniform.sampleNanos(random)).isBetween(10 * MS, 20 * MS);
    }
    assertThat(Latency.NONE.sampleNanos(random)).isZero();
  }

  @Test
  void logNormalHasTheAskedMedianAndNinetyNinthPercentile() {
    Latency latency = new Latency.LogNormal(120 * MS, 4_000 * MS);
    RandomSource random = RandomSource.seeded(2026);
    long[] samples = new long[200_000];
    for (int i = 0; i < samples.length; i++) {
      samples[i] = latency.sampleNanos(random);
    }
    Arrays.sort(samples);

    assertThat(samples[samples.length / 2]).isBetween(110 * MS, 130 * MS);
    assertThat(samples[(int) (samples.length * 0.99)]).isBetween(3_500 * MS, 4_500 * MS);
    assertThat(samples[0]).isPositive();
    assertThat(samples[samples.length - 1]).isLessThanOrEqualTo(40_000 * MS);
  }

  @Test
  void bimodalSplitsByTheFastShare() {
    Latency latency = new Latency.Bimodal(0.9, 20 * MS, 2_000 * MS);
    RandomSource random = RandomSource.seeded(3);
    int fast = 0;
    for (int i = 0; i < 100_000; i++) {
      long sample = latency.sampleNanos(random);
      assertThat(sample).isIn(20 * MS, 2_000 * MS);
      if (sample == 20 * MS) {
        fast++;
      }
    }
    assertThat(fast).isBetween(89_000, 91_000);
  }
}
