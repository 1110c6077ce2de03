package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class SeriesTest {
  @Test
  void latencyBucketsAreMonotoneAndAtMostAQuarterWide() {
    int previous = 0;
    for (long nanos = 0; nanos < 100_000_000_000L; nanos = nanos * 9 / 8 + 1000) {
      int b = Series.latencyBucket(nanos);
      assertThat(b).isGreaterThanOrEqualTo(previous);
      previous = b;
      if (nanos > 10_000) {
        double mid = Series.bucketMidMillis(b) * 1e6;
        assertThat(mid / nanos).as("nanos %d", nanos).isBetween(0.85, 1.15);
      }
    }
  }

  @Test
  void quantilesComeFromTheCountedLatencies() {
    Series s = new Series(3);
    for (int i = 0; i < 98; i++) {
      s.addLatency(1, 100_000_000L); // 100 ms
    }
    s.addLatency(1, 3_000_000_000L); // two at 3 s
    s.addLatency(1, 3_000_000_000L);
    assertThat(s.latencyQuantileMillis(1, 0.50)).isCloseTo(100, within(12.5));
    assertThat(s.latencyQuantileMillis(1, 0.98)).isCloseTo(100, within(12.5));
    assertThat(s.latencyQuantileMillis(1, 0.99)).isCloseTo(3000, within(375.0));
    assertThat(s.latencyQuantileMillis(0, 0.5)).isNaN();
    assertThat(s.latencyQuantileMillis(0, 3, 0.99)).isCloseTo(3000, within(375.0));
  }
}
