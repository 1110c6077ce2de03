package dev.parapet.core.latency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.RandomSource;
import org.junit.jupiter.api.Test;

class LogLinearBucketsTest {

  @Test
  void smallValuesAreExact() {
    for (long v = 0; v < 64; v++) {
      assertThat(LogLinearBuckets.midpoint(LogLinearBuckets.index(v))).isEqualTo(v);
    }
  }

  @Test
  void everyBucketMapsBackToItself() {
    for (int i = 0; i < LogLinearBuckets.COUNT; i++) {
      long lower = LogLinearBuckets.lowerBound(i);
      assertThat(LogLinearBuckets.index(lower)).as("lower bound of %d", i).isEqualTo(i);
      assertThat(LogLinearBuckets.index(LogLinearBuckets.midpoint(i))).isEqualTo(i);
      if (i + 1 < LogLinearBuckets.COUNT) {
        long nextLower = LogLinearBuckets.lowerBound(i + 1);
        assertThat(nextLower).isGreaterThan(lower);
        assertThat(LogLinearBuckets.index(nextLower - 1)).isEqualTo(i);
      }
    }
    assertThat(LogLinearBuckets.index(LogLinearBuckets.MAX_TRACKABLE_NANOS))
        .isEqualTo(LogLinearBuckets.COUNT - 1);
  }

  @Test
  void midpointErrsByAtMostOneSixtyFourth() {
    long seed = 20261201L;
    RandomSource random = RandomSource.seeded(seed);
    for (int i = 0; i < 200_000; i++) {
      // log-uniform over 1 ns .. 2^40 ns
      long v = (long) Math.pow(2, random.nextDouble() * 40);
      long estimate = LogLinearBuckets.midpoint(LogLinearBuckets.index(v));
      double error = Math.abs(estimate - v) / (double) Math.max(1, v);
      assertThat(error)
          .as("seed %d value %d estimate %d", seed, v, estimate)
          .isLessThanOrEqualTo(1.0 / 64);
    }
  }

  @Test
  void negativeAndHugeValuesAreClamped() {
    assertThat(LogLinearBuckets.index(-5)).isZero();
    assertThat(LogLinearBuckets.index(Long.MAX_VALUE)).isEqualTo(LogLinearBuckets.COUNT - 1);
    assertThat(LogLinearBuckets.COUNT).isEqualTo(1152);
  }
}
