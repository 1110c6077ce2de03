package dev.parapet.core.limit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.RandomSource;
import org.junit.jupiter.api.Test;

class LimitAlgorithmTest {
  private static final long MS = 1_000_000L;

  @Test
  void fixedLimitNeverMoves() {
    FixedLimit fixed = FixedLimit.of(7);
    assertThat(fixed.onSample(0, 5 * MS, 7, true)).isEqualTo(7);
    assertThat(fixed.onSample(0, 5 * MS, 7, false)).isEqualTo(7);
    assertThat(fixed.limit()).isEqualTo(7);
    assertThatThrownBy(() -> FixedLimit.of(0)).hasMessage("limit : 0 (expected: >= 1)");
  }

  @Test
  void aimdAddsOneWhenBusyAndBacksOffOnDrop() {
    AimdLimit aimd = new AimdLimit(10, 2, 12, 0.5, 100 * MS);
    assertThat(aimd.onSample(0, MS, 5, false)).as("inflight*2 >= limit").isEqualTo(11);
    assertThat(aimd.onSample(0, MS, 12, false)).isEqualTo(12);
    assertThat(aimd.onSample(0, MS, 12, false)).as("capped at max").isEqualTo(12);
    assertThat(aimd.onSample(0, MS, 5, false)).as("app-limited: unchanged").isEqualTo(12);
    assertThat(aimd.onSample(0, MS, 12, true)).as("drop halves").isEqualTo(6);
    assertThat(aimd.onSample(0, 101 * MS, 6, false)).as("slower than timeout").isEqualTo(3);
    assertThat(aimd.onSample(0, MS, 1, true)).as("floored at min").isEqualTo(2);
    assertThat(aimd.onSample(0, MS, 1, true)).isEqualTo(2);
  }

  @Test
  void aimdBackoffAlwaysShrinksByAtLeastOne() {
    AimdLimit aimd = new AimdLimit(5, 1, 10, 0.9, 100 * MS);
    assertThat(aimd.onSample(0, MS, 5, true)).isEqualTo(4);
  }

  @Test
  void aimdRejectsBadArguments() {
    assertThatThrownBy(() -> new AimdLimit(10, 1, 20, 1.0, MS))
        .hasMessage("backoffRatio : 1.0 (expected: in [0.5, 1))");
    assertThatThrownBy(() -> new AimdLimit(10, 1, 20, 0.9, 0))
        .hasMessage("timeoutNanos : 0 (expected: > 0)");
    assertThatThrownBy(() -> new AimdLimit(30, 1, 20, 0.9, MS))
        .hasMessage("initial : 30 (expected: in [1, 20])");
    assertThatThrownBy(() -> new AimdLimit(10, 0, 20, 0.9, MS))
        .hasMessage("min : 0 (expected: >= 1)");
    assertThatThrownBy(() -> new AimdLimit(10, 10, 5, 0.9, MS))
        .hasMessage("max : 5 (expected: >= min 10)");
  }

  @Test
  void vegasFirstSampleOnlySetsTheBaseline() {
    VegasLimit vegas = VegasLimit.of(20, 1, 1000, RandomSource.seeded(1));
    assertThat(vegas.onSample(0, 10 * MS, 20, false)).isEqualTo(20);
    assertThat(vegas.rttNoLoadNanos()).isEqualTo(10 * MS);
    assertThat(vegas.onSample(0, 8 * MS, 20, false)).as("a faster sample lowers it").isEqualTo(20);
    assertThat(vegas.rttNoLoadNanos()).isEqualTo(8 * MS);
  }

  @Test
  void vegasGrowsByBetaWithoutQueueingAndShrinksWithIt() {
    VegasLimit vegas = VegasLimit.of(20, 1, 1000, RandomSource.seeded(1));
    vegas.onSample(0, 10 * MS, 20, false);
    // rtt == rttNoLoad: queue 0 <= threshold 1, so + beta (6 * 1).
    assertThat(vegas.onSample(0, 10 * MS, 20, false)).isEqualTo(26);
    // rtt twice the baseline: queue = ceil(26 * 0.5) = 13 > beta 6, so - step.
    assertThat(vegas.onSample(0, 20 * MS, 26, false)).isEqualTo(25);
    // queue = ceil(25 * (1 - 10/11)) = 3: between threshold and alpha 3? 3 < 3 is false,
    // and 3 <= beta: the sweet spot, unchanged.
    assertThat(vegas.onSample(0, 11 * MS, 25, false)).isEqualTo(25);
    // queue = ceil(25 * (1 - 10/10.5)) = 2: below alpha, so + step.
    assertThat(vegas.onSample(0, 10_500_000L, 25, false)).isEqualTo(26);
  }

  @Test
  void vegasUsesLog10StepsAtLargeLimits() {
    VegasLimit vegas = VegasLimit.of(1000, 1, 5000, RandomSource.seeded(1));
    vegas.onSample(0, 10 * MS, 1000, false);
    assertThat(vegas.onSample(0, 10 * MS, 1000, false)).as("+ 6 * log10(1000)").isEqualTo(1018);
    assertThat(vegas.onSample(0, 10 * MS, 1000, true)).as("- log10(1018)").isEqualTo(1015);
  }

  @Test
  void vegasIgnoresAppLimitedTrafficAndZeroRtt() {
    VegasLimit vegas = VegasLimit.of(20, 1, 1000, RandomSource.seeded(1));
    vegas.onSample(0, 10 * MS, 20, false);
    assertThat(vegas.onSample(0, 10 * MS, 9, false)).isEqualTo(20);
    assertThat(vegas.onSample(0, 0, 20, false)).isEqualTo(20);
    assertThat(vegas.onSample(0, 0, 20, true)).as("a drop counts even without rtt").isEqualTo(19);
  }

  @Test
  void vegasStaysWithinBounds() {
    VegasLimit vegas = VegasLimit.of(10, 8, 12, RandomSource.seeded(1));
    vegas.onSample(0, 10 * MS, 10, false);
    assertThat(vegas.onSample(0, 10 * MS, 10, false)).isEqualTo(12);
    for (int i = 0; i < 10; i++) {
      vegas.onSample(0, 10 * MS, 12, true);
    }
    assertThat(vegas.limit()).isEqualTo(8);
  }

  @Test
  void vegasForgetsItsBaselineAfterProbeInterval() {
    // jitter = 0.5 + 0.5 * 0 = 0.5: probe after 0.5 * 2 * 20 = 20 samples.
    VegasLimit vegas = new VegasLimit(20, 20, 20, 1.0, 2, () -> 0.0);
    vegas.onSample(0, 5 * MS, 20, false);
    for (int i = 0; i < 18; i++) {
      vegas.onSample(0, 50 * MS, 20, false);
    }
    assertThat(vegas.rttNoLoadNanos()).isEqualTo(5 * MS);
    vegas.onSample(0, 50 * MS, 20, false);
    assertThat(vegas.rttNoLoadNanos()).as("20th sample resets the baseline").isEqualTo(50 * MS);
  }

  @Test
  void gradient2CreepsUpWhileLatencyHolds() {
    Gradient2Limit g = Gradient2Limit.of(200, 20, 2000);
    assertThat(g.onSample(0, 10 * MS, 200, false)).as("200*0.8 + 204*0.2").isEqualTo(200);
    assertThat(g.onSample(0, 10 * MS, 200, false)).isEqualTo(201);
    assertThat(g.longRttNanos()).isEqualTo(10.0 * MS);
  }

  @Test
  void gradient2ShrinksWhenLatencyRises() {
    Gradient2Limit g = Gradient2Limit.of(200, 20, 2000);
    for (int i = 0; i < 10; i++) {
      g.onSample(0, 10 * MS, 1, false); // warm the long average while app-limited
    }
    assertThat(g.limit()).isEqualTo(200);
    // long = 10 + 10 * 2/601 = 10.033; gradient = 0.5017; target = 104.33; 160 + 20.87.
    assertThat(g.onSample(0, 20 * MS, 200, false)).isEqualTo(180);
  }

  @Test
  void gradient2TreatsADropAsTheSteepestGradient() {
    Gradient2Limit g = Gradient2Limit.of(200, 20, 2000);
    g.onSample(0, 10 * MS, 1, false);
    // gradient 0.5 even though rtt equals the average, and even when app-limited.
    assertThat(g.onSample(0, 10 * MS, 1, true)).as("160 + (100 + 4) * 0.2").isEqualTo(180);
    assertThat(g.onSample(0, 0, 1, true)).as("180.8*0.8 + 94.4*0.2").isEqualTo(163);
    assertThat(g.onSample(0, 0, 200, false)).as("no rtt, no drop: no information").isEqualTo(163);
  }

  @Test
  void gradient2IgnoresAppLimitedTraffic() {
    Gradient2Limit g = Gradient2Limit.of(200, 20, 2000);
    assertThat(g.onSample(0, 10 * MS, 99, false)).isEqualTo(200);
    assertThat(g.onSample(0, 100 * MS, 99, false)).isEqualTo(200);
  }

  @Test
  void gradient2FloorsAtMinAndDecaysAStaleLongAverage() {
    Gradient2Limit g = Gradient2Limit.of(200, 20, 2000);
    for (int i = 0; i < 200; i++) {
      g.onSample(0, 100 * MS, 2000, true);
    }
    assertThat(g.limit()).isEqualTo(20);
    double before = g.longRttNanos();
    g.onSample(0, 10 * MS, 20, false);
    assertThat(g.longRttNanos()).as("long/short > 2: long shrinks by 10%").isLessThan(before * 0.9);
  }

  @Test
  void defaultsFollowTheDesign() {
    Gradient2Limit g = Gradient2Limit.defaults();
    assertThat(g.limit()).isEqualTo(200);
    for (int i = 0; i < 5000; i++) {
      g.onSample(0, 10 * MS, 5000, false);
    }
    assertThat(g.limit()).isEqualTo(2000);
    assertThatThrownBy(() -> new Gradient2Limit(200, 20, 2000, 0, 4, 600))
        .hasMessage("smoothing : 0.0 (expected: in (0, 1])");
    assertThatThrownBy(() -> new Gradient2Limit(200, 20, 2000, 0.2, -1, 600))
        .hasMessage("queueSize : -1 (expected: >= 0)");
  }

  @Test
  void configurationNamesPickTheAlgorithm() {
    RandomSource random = RandomSource.seeded(3);
    assertThat(LimitAlgorithm.named("fixed", 50, 20, 2000, random))
        .isInstanceOf(FixedLimit.class)
        .extracting(LimitAlgorithm::limit)
        .isEqualTo(50);
    assertThat(LimitAlgorithm.named("aimd", 200, 20, 2000, random)).isInstanceOf(AimdLimit.class);
    assertThat(LimitAlgorithm.named("vegas", 200, 20, 2000, random)).isInstanceOf(VegasLimit.class);
    LimitAlgorithm g = LimitAlgorithm.named("gradient2", 200, 20, 2000, random);
    assertThat(g).isInstanceOf(Gradient2Limit.class);
    assertThat(g.limit()).isEqualTo(200);
    assertThatThrownBy(() -> LimitAlgorithm.named("bbr", 200, 20, 2000, random))
        .hasMessage("algorithm : bbr (expected: one of fixed, aimd, vegas, gradient2)");
    assertThatThrownBy(() -> LimitAlgorithm.named("fixed", 10, 20, 2000, random))
        .hasMessage("initial : 10 (expected: in [20, 2000])");
  }
}
