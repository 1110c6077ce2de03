package dev.parapet.core.latency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.ManualTicker;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code stale_on_slow: auto}'s estimator: 2 × the p95 of recent successes, floor, overdue. */
class AdaptiveWaitTest {
  private static final long MS = 1_000_000L;

  /** Start times: zero, and just below Long.MAX_VALUE so the clock wraps during the test. */
  private static final long NEAR_WRAP = Long.MAX_VALUE - 5_000 * MS;

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void beforeAnySampleTheWaitIsTheNoDataDefault(long start) {
    AdaptiveWait w = AdaptiveWait.withDefaults(start);
    assertThat(w.estimateNanos(start)).isEqualTo(RollingLatencyHistogram.NO_DATA);
    assertThat(w.waitNanos(start)).isEqualTo(1_000 * MS);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void aFirstSampleCountsAtOnceAndTheFloorHoldsForFastOrigins(long start) {
    ManualTicker t = new ManualTicker(start);
    AdaptiveWait w = AdaptiveWait.withDefaults(t.read());
    w.waitNanos(t.read()); // computed (no data) just before the sample: must not hide it
    t.advance(MS);
    w.onSuccess(5 * MS, t.read());
    assertThat(w.waitNanos(t.read())).as("max(20 ms, 2 x 5 ms)").isEqualTo(20 * MS);
    AdaptiveWait slower = AdaptiveWait.withDefaults(t.read());
    slower.onSuccess(100 * MS, t.read());
    assertThat(slower.waitNanos(t.read())).isBetween(2 * 98 * MS, 2 * 102 * MS);
  }

  /** Seeded lognormal latencies (p50 120 ms, p99 400 ms, the demo's healthy API): 2 × p95. */
  @ParameterizedTest
  @ValueSource(longs = {1L, 2L, 3L, 42L, 2026L})
  void followsTwiceTheP95OfASeededSequence(long seed) {
    ManualTicker t = new ManualTicker(NEAR_WRAP);
    AdaptiveWait w = AdaptiveWait.withDefaults(t.read());
    SplittableRandom random = new SplittableRandom(seed);
    double sigma = Math.log(400.0 / 120.0) / 2.326;
    long[] samples = new long[2_000];
    for (int i = 0; i < samples.length; i++) {
      samples[i] = (long) (120 * MS * Math.exp(sigma * gaussian(random)));
      w.onSuccess(samples[i], t.read());
      t.advance(MS); // 2 s in all: inside the 10 s window
    }
    t.advance(100 * MS);
    Arrays.sort(samples);
    long p95 = samples[(int) Math.ceil(0.95 * samples.length) - 1];
    assertThat(w.estimateNanos(t.read()))
        .as("seed %d", seed)
        .isBetween((long) (p95 * 0.98), (long) (p95 * 1.02));
    assertThat(w.waitNanos(t.read()))
        .as("seed %d", seed)
        .isBetween((long) (2 * p95 * 0.98), (long) (2 * p95 * 1.02));
  }

  @Test
  void oldSamplesAgeOutAndAnEmptyWindowKeepsTheLastEstimate() {
    ManualTicker t = new ManualTicker(0);
    AdaptiveWait w = AdaptiveWait.withDefaults(0);
    for (int i = 0; i < 50; i++) {
      w.onSuccess(300 * MS, t.read());
    }
    assertThat(w.waitNanos(t.read())).isBetween(590 * MS, 610 * MS);
    t.advance(11_000 * MS); // the 300 ms samples leave the window
    for (int i = 0; i < 50; i++) {
      w.onSuccess(40 * MS, t.read());
    }
    t.advance(100 * MS);
    assertThat(w.waitNanos(t.read())).as("decayed to the new latency").isBetween(78 * MS, 82 * MS);
    t.advance(60_000 * MS); // nothing for a minute: the origin is quiet, not faster
    assertThat(w.waitNanos(t.read())).isBetween(78 * MS, 82 * MS);
  }

  @Test
  void aFewSamplesAfterAQuietSpellDoNotLowerAFullWindowsP95() {
    ManualTicker t = new ManualTicker(0);
    AdaptiveWait w = AdaptiveWait.withDefaults(0);
    for (int i = 0; i < 50; i++) {
      w.onSuccess(300 * MS, t.read());
    }
    assertThat(w.estimateNanos(t.read())).isBetween(295 * MS, 305 * MS);
    t.advance(20_000 * MS); // an outage: no success for longer than the window
    for (int i = 0; i < 19; i++) {
      w.onSuccess(100 * MS, t.read()); // the first answers after it, as fast as a healthy median
      t.advance(100 * MS);
      assertThat(w.waitNanos(t.read())).as("after %d", i + 1).isBetween(590 * MS, 610 * MS);
    }
    w.onSuccess(100 * MS, t.read()); // twenty: a p95 again, which may be lower
    t.advance(100 * MS);
    assertThat(w.waitNanos(t.read())).isBetween(195 * MS, 205 * MS);
    t.advance(11_000 * MS);
    w.onSuccess(900 * MS, t.read()); // a few slower samples still raise it
    t.advance(100 * MS);
    assertThat(w.waitNanos(t.read())).isBetween(1790 * MS, 1810 * MS);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void oneWaitRunningOutIsAHealthyTailTwoPastTheEstimateAreAnOverdueOrigin(long start) {
    ManualTicker t = new ManualTicker(start);
    AdaptiveWait w = AdaptiveWait.withDefaults(t.read());
    for (int i = 0; i < 50; i++) {
      w.onSuccess(100 * MS, t.read());
    }
    t.advance(100 * MS);
    assertThat(w.onPastEstimate(t.read())).isFalse(); // one request at its checkpoint
    t.advance(100 * MS);
    assertThat(w.onWaitRanOut(t.read())).as("the same request, alone").isFalse();
    assertThat(w.isOverdue(t.read())).isFalse();
    assertThat(w.waitNanos(t.read())).isBetween(196 * MS, 204 * MS);

    assertThat(w.onPastEstimate(t.read())).isFalse(); // a second one, no answer in time between
    t.advance(100 * MS);
    assertThat(w.onWaitRanOut(t.read())).as("made it overdue").isTrue();
    assertThat(w.isOverdue(t.read())).isTrue();
    assertThat(w.onWaitRanOut(t.read())).as("already was").isFalse();

    w.onSuccess(90 * MS, t.read()); // in time again
    assertThat(w.isOverdue(t.read())).isFalse();
    assertThat(w.onPastEstimate(t.read())).isFalse();
    w.onSuccess(90 * MS, t.read()); // an answer in time between ends the run
    assertThat(w.onPastEstimate(t.read())).isFalse();
    assertThat(w.onWaitRanOut(t.read())).isFalse();
    assertThat(w.isOverdue(t.read())).isFalse();
  }

  @Test
  void fewSamplesUseTheLargest() {
    AdaptiveWait w = AdaptiveWait.withDefaults(0);
    w.onSuccess(10 * MS, 0);
    w.onSuccess(90 * MS, 0);
    w.onSuccess(30 * MS, 200 * MS);
    assertThat(w.waitNanos(200 * MS)).isBetween(178 * MS, 182 * MS);
  }

  @Test
  void overdueWaitsNothingUntilASuccessArrivesWithinTheWaitItHadThen() {
    ManualTicker t = new ManualTicker(0);
    AdaptiveWait w = AdaptiveWait.withDefaults(0);
    for (int i = 0; i < 50; i++) {
      w.onSuccess(100 * MS, t.read());
    }
    long healthy = w.waitNanos(t.read());
    assertThat(healthy).isBetween(196 * MS, 204 * MS);
    assertThat(w.onOverdue(t.read())).as("made it overdue").isTrue();
    assertThat(w.onOverdue(t.read())).as("already was").isFalse();
    assertThat(w.isOverdue(t.read())).isTrue();
    assertThat(w.waitNanos(t.read())).isZero();
    // a brownout: slower successes feed the estimate, which grows, but cannot end the overdue;
    // nor can answers within the wait but slower than the healthy latency (another tier's stale)
    for (int i = 0; i < 200; i++) {
      t.advance(10 * MS);
      w.onSuccess(healthy + 300 * MS, t.read());
      w.onSuccess(healthy - 10 * MS, t.read());
    }
    assertThat(w.healthyWaitNanos(t.read())).isGreaterThan(healthy + 300 * MS);
    assertThat(w.waitNanos(t.read())).as("still slow").isZero();
    w.onSuccess(90 * MS, t.read()); // as fast as before the brownout
    assertThat(w.isOverdue(t.read())).isFalse();
    assertThat(w.waitNanos(t.read())).isEqualTo(w.healthyWaitNanos(t.read())).isPositive();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void aRunOfRequestsPastTheEstimateMakesTheOriginOverdue(long start) {
    ManualTicker t = new ManualTicker(start);
    AdaptiveWait w = AdaptiveWait.withDefaults(t.read());
    for (int i = 0; i < 50; i++) {
      w.onSuccess(100 * MS, t.read());
    }
    assertThat(w.estimateWaitNanos(t.read()))
        .as("the p95, half the wait")
        .isBetween(98 * MS, 102 * MS);
    for (int i = 1; i < AdaptiveWait.DEFAULT_QUORUM; i++) {
      t.advance(MS);
      assertThat(w.onPastEstimate(t.read())).isFalse();
    }
    assertThat(w.isOverdue(t.read())).isFalse();
    w.onSuccess(90 * MS, t.read()); // one answer in time: the run starts again
    for (int i = 1; i < AdaptiveWait.DEFAULT_QUORUM; i++) {
      assertThat(w.onPastEstimate(t.read())).isFalse();
    }
    w.onSuccess(150 * MS, t.read()); // a success, but past the estimate: the run goes on
    assertThat(w.onPastEstimate(t.read())).as("the last of the run").isTrue();
    assertThat(w.isOverdue(t.read())).isTrue();
    assertThat(w.waitNanos(t.read())).isZero();
    assertThat(w.estimateWaitNanos(t.read())).isZero();
    assertThat(w.onPastEstimate(t.read())).as("already overdue").isFalse();
  }

  /**
   * A healthy origin (seeded lognormal latencies, p50 120 ms, p99 400 ms) whose requests each
   * either answer within the estimate or report themselves past it, as waiting requests do: over
   * 200,000 requests (about half an hour of a route's misses at 100 a second) the run rule makes it
   * overdue at most once (expected: 0.1 times), while the same origin turned slow is made overdue
   * by the last request of one run.
   */
  @ParameterizedTest
  @ValueSource(longs = {1L, 2L, 3L, 42L, 2026L})
  void aHealthyOriginsTailIsRarelyARun(long seed) {
    ManualTicker t = new ManualTicker(NEAR_WRAP);
    AdaptiveWait w = AdaptiveWait.withDefaults(t.read());
    SplittableRandom random = new SplittableRandom(seed);
    double sigma = Math.log(400.0 / 120.0) / 2.326;
    int falseRuns = 0;
    for (int i = 0; i < 200_000; i++) {
      long latency = (long) (120 * MS * Math.exp(sigma * gaussian(random)));
      if (i > 100 && latency > w.estimateWaitNanos(t.read()) && w.onPastEstimate(t.read())) {
        falseRuns++;
      }
      w.onSuccess(latency, t.read());
      t.advance(MS / 10);
    }
    assertThat(falseRuns).as("seed %d", seed).isLessThanOrEqualTo(1);
    w.onSuccess(50 * MS, t.read()); // in time: not overdue, whatever happened last
    assertThat(w.isOverdue(t.read())).isFalse();
    int made = 0;
    for (int i = 1; i <= AdaptiveWait.DEFAULT_QUORUM; i++) {
      made = w.onPastEstimate(t.read()) ? i : made;
    }
    assertThat(made).isEqualTo(AdaptiveWait.DEFAULT_QUORUM);
  }

  @Test
  void overdueEndsAfterThirtySecondsSoAChangedOriginIsMeasuredAgain() {
    ManualTicker t = new ManualTicker(NEAR_WRAP);
    AdaptiveWait w = AdaptiveWait.withDefaults(t.read());
    w.onSuccess(50 * MS, t.read());
    w.onOverdue(t.read());
    t.advance(29_999 * MS);
    assertThat(w.waitNanos(t.read())).isZero();
    t.advance(MS);
    assertThat(w.isOverdue(t.read())).isFalse();
    assertThat(w.waitNanos(t.read())).isBetween(98 * MS, 102 * MS);
  }

  /**
   * Seeded random sequences of successes, overdue waits and time steps against a reference model:
   * the wait is 0 exactly while overdue (since the last run-out, for at most 30 s, until a success
   * within the healthy latency frozen at the first run-out); otherwise at least the floor and at
   * most twice the largest sample seen (plus the histogram's error), or the no-data default before
   * any sample.
   */
  @Test
  void randomSequencesFollowTheModel() {
    for (long seed = 1; seed <= 200; seed++) {
      SplittableRandom random = new SplittableRandom(seed);
      ManualTicker t = new ManualTicker(random.nextBoolean() ? 0 : NEAR_WRAP);
      AdaptiveWait w = AdaptiveWait.withDefaults(t.read());
      long frozen = -1;
      long since = 0;
      long largest = -1;
      for (int step = 0; step < 300; step++) {
        int kind = random.nextInt(10);
        if (kind < 6) {
          long latency = random.nextLong(1, 2_000) * MS;
          if (frozen >= 0 && latency <= frozen) {
            frozen = -1;
          }
          w.onSuccess(latency, t.read());
          largest = Math.max(largest, latency);
        } else if (kind < 7) {
          long healthy = w.healthyWaitNanos(t.read());
          since = t.read();
          if (frozen < 0) {
            frozen = healthy / 2; // the healthy latency the wait came from
          }
          w.onOverdue(t.read());
        } else {
          t.advance(random.nextLong(1, 8_000) * MS);
        }
        if (frozen >= 0 && t.read() - since >= 30_000 * MS) {
          frozen = -1;
        }
        long wait = w.waitNanos(t.read());
        String at = "seed " + seed + " step " + step;
        if (frozen >= 0) {
          assertThat(wait).as(at).isZero();
        } else if (largest < 0) {
          assertThat(wait).as(at).isEqualTo(1_000 * MS);
        } else {
          assertThat(wait).as(at).isBetween(20 * MS, (long) (2 * largest * 1.02));
        }
      }
    }
  }

  @Test
  void refusesNonsense() {
    assertThatThrownBy(() -> new AdaptiveWait(0.5, Duration.ZERO, Duration.ZERO, 0))
        .hasMessage("multiplier : 0.5 (expected: in [1, 100])");
    assertThatThrownBy(() -> new AdaptiveWait(2, Duration.ofMillis(-1), Duration.ZERO, 0))
        .hasMessageStartingWith("floor");
  }

  private static double gaussian(SplittableRandom r) {
    double u = 1.0 - r.nextDouble();
    double v = r.nextDouble();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}
