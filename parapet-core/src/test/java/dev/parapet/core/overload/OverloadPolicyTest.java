package dev.parapet.core.overload;

import static dev.parapet.core.overload.OverloadLevel.DISABLE_HEDGES_AND_RETRIES;
import static dev.parapet.core.overload.OverloadLevel.NONE;
import static dev.parapet.core.overload.OverloadLevel.SHED_LOW_PRIORITY;
import static dev.parapet.core.overload.OverloadLevel.STOP_ACCEPTING;
import static dev.parapet.core.overload.OverloadResource.CPU;
import static dev.parapet.core.overload.OverloadResource.EVENT_LOOP_LAG;
import static dev.parapet.core.overload.OverloadResource.HEAP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.ManualTicker;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OverloadPolicyTest {
  private static final long SECOND = 1_000_000_000L;

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 3 * SECOND})
  void designDefaultsMapHeapAndCpuToActions(long start) {
    OverloadPolicy p = new OverloadPolicy(OverloadConfig.defaults());
    assertThat(p.onReading(HEAP, 0.84, start)).isEqualTo(NONE);
    assertThat(p.onReading(CPU, 0.74, start)).isEqualTo(NONE);
    assertThat(p.onReading(EVENT_LOOP_LAG, 5e9, start)).isEqualTo(NONE); // no lag default
    assertThat(p.onReading(HEAP, 0.85, start)).isEqualTo(SHED_LOW_PRIORITY);
    assertThat(p.onReading(HEAP, 0.95, start)).isEqualTo(STOP_ACCEPTING);
    assertThat(p.level().stopsAccepting()).isTrue();
    OverloadPolicy cpu = new OverloadPolicy(OverloadConfig.defaults());
    assertThat(cpu.onReading(CPU, 0.75, start)).isEqualTo(SHED_LOW_PRIORITY);
    assertThat(cpu.level().disablesHedgesAndRetries()).isTrue();
    assertThat(cpu.level().stopsAccepting()).isFalse();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 3 * SECOND})
  void leavesOnlyBelowTheReleaseBandAfterTheCooldown(long start) {
    ManualTicker t = new ManualTicker(start);
    OverloadPolicy p = new OverloadPolicy(OverloadConfig.defaults()); // band 5 %, cooldown 5 s
    p.onReading(HEAP, 0.86, t.read());
    // 0.81 is below the threshold but above the release point 0.8075: stays, however long.
    for (int i = 0; i < 20; i++) {
      assertThat(p.onReading(HEAP, 0.81, t.advance(SECOND).read())).isEqualTo(SHED_LOW_PRIORITY);
    }
    assertThat(p.onReading(HEAP, 0.80, t.read())).isEqualTo(SHED_LOW_PRIORITY);
    t.advance(5 * SECOND - 1);
    assertThat(p.evaluate(t.read())).isEqualTo(SHED_LOW_PRIORITY);
    t.advance(1);
    assertThat(p.evaluate(t.read())).isEqualTo(NONE);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 3 * SECOND})
  void aReadingAboveTheReleasePointRestartsTheCooldown(long start) {
    ManualTicker t = new ManualTicker(start);
    OverloadPolicy p = new OverloadPolicy(OverloadConfig.defaults());
    p.onReading(CPU, 0.9, t.read());
    p.onReading(CPU, 0.5, t.advance(SECOND).read());
    p.onReading(CPU, 0.72, t.advance(4 * SECOND).read()); // above 0.7125 just before calm ends
    assertThat(p.onReading(CPU, 0.5, t.advance(SECOND).read())).isEqualTo(SHED_LOW_PRIORITY);
    assertThat(p.evaluate(t.advance(4 * SECOND).read())).isEqualTo(SHED_LOW_PRIORITY);
    assertThat(p.evaluate(t.advance(SECOND).read())).isEqualTo(NONE);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 3 * SECOND})
  void stepsDownOneHeldLevelAtATime(long start) {
    ManualTicker t = new ManualTicker(start);
    OverloadPolicy p = new OverloadPolicy(OverloadConfig.defaults());
    p.onReading(HEAP, 0.97, t.read());
    // 0.88 is below stop's release (0.9025) but holds shed_low.
    p.onReading(HEAP, 0.88, t.advance(SECOND).read());
    assertThat(p.evaluate(t.advance(5 * SECOND).read())).isEqualTo(SHED_LOW_PRIORITY);
    p.onReading(HEAP, 0.1, t.read());
    assertThat(p.evaluate(t.advance(5 * SECOND - 1).read())).isEqualTo(SHED_LOW_PRIORITY);
    assertThat(p.evaluate(t.advance(1).read())).isEqualTo(NONE);
  }

  @Test
  void aReadingHoveringAtTheThresholdDoesNotFlap() {
    OverloadPolicy p = new OverloadPolicy(OverloadConfig.defaults());
    long now = 0;
    int changes = 0;
    OverloadLevel last = p.level();
    SplittableRandom r = new SplittableRandom(1);
    for (int i = 0; i < 10_000; i++) {
      now += SECOND / 10;
      OverloadLevel l = p.onReading(HEAP, 0.85 + (r.nextDouble() - 0.5) * 0.06, now);
      changes += l != last ? 1 : 0;
      last = l;
    }
    assertThat(changes).isEqualTo(1);
  }

  @Test
  void eventLoopLagAndExplicitLevelsWork() {
    OverloadConfig config =
        OverloadConfig.none()
            .withLag(DISABLE_HEDGES_AND_RETRIES, Duration.ofMillis(50))
            .withLag(STOP_ACCEPTING, Duration.ofMillis(500))
            .withHysteresis(0.0, Duration.ZERO);
    OverloadPolicy p = new OverloadPolicy(config);
    assertThat(p.onReading(EVENT_LOOP_LAG, 49e6, 0)).isEqualTo(NONE);
    assertThat(p.onReading(EVENT_LOOP_LAG, 60e6, 0)).isEqualTo(DISABLE_HEDGES_AND_RETRIES);
    assertThat(p.onReading(EVENT_LOOP_LAG, 600e6, 0)).isEqualTo(STOP_ACCEPTING);
    assertThat(p.onReading(EVENT_LOOP_LAG, 1e6, 1)).isEqualTo(NONE);
    assertThat(p.onReading(HEAP, Double.NaN, 1)).isEqualTo(NONE);
    assertThat(p.reading(EVENT_LOOP_LAG)).isEqualTo(1e6);
  }

  @Test
  void configErrorsSayWhatExpectedAndFound() {
    assertThatThrownBy(() -> OverloadConfig.defaults().with(HEAP, SHED_LOW_PRIORITY, 1.2))
        .hasMessage("overload.heap.shed_low : 1.2 (expected: in (0, 1])");
    assertThatThrownBy(() -> OverloadConfig.defaults().with(HEAP, STOP_ACCEPTING, 0.5))
        .hasMessage(
            "overload.heap.stop_accepting : 0.5 (expected: thresholds of heap not decreasing with"
                + " severity)");
    assertThatThrownBy(() -> OverloadConfig.none().with(CPU, NONE, 0.5))
        .hasMessage("overload.cpu.none : 0.5 (expected: a level > none)");
    assertThatThrownBy(() -> OverloadConfig.none().withHysteresis(1.0, Duration.ZERO))
        .hasMessage("overload.hysteresis : 1.0 (expected: in [0, 1))");
    assertThat(OverloadConfig.defaults().threshold(CPU, SHED_LOW_PRIORITY)).isEqualTo(0.75);
    assertThat(OverloadConfig.defaults().threshold(CPU, STOP_ACCEPTING)).isNaN();
  }

  /**
   * Random readings against the rules: the level is never below what the readings reach, never
   * falls while a reading holds it, and never falls sooner than the cooldown after it last rose or
   * was last held.
   */
  @Test
  void randomReadingsKeepTheHysteresisContract() {
    for (long seed = 1; seed <= 100; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      OverloadConfig config =
          OverloadConfig.defaults()
              .with(CPU, DISABLE_HEDGES_AND_RETRIES, 0.6)
              .withLag(SHED_LOW_PRIORITY, Duration.ofMillis(100))
              .withHysteresis(r.nextDouble() * 0.2, Duration.ofMillis(r.nextInt(5000)));
      OverloadPolicy p = new OverloadPolicy(config);
      long now = r.nextBoolean() ? 0L : Long.MAX_VALUE - 50 * SECOND;
      long lastHeldOrRaised = now;
      double[] latest = {Double.NaN, Double.NaN, Double.NaN};
      for (int step = 0; step < 2000; step++) {
        now += r.nextLong(SECOND / 2);
        OverloadResource res = OverloadResource.values()[r.nextInt(3)];
        double v = res == EVENT_LOOP_LAG ? r.nextDouble() * 2e8 : r.nextDouble();
        latest[res.ordinal()] = v;
        OverloadLevel before = p.level();
        OverloadLevel after = p.onReading(res, v, now);
        OverloadLevel entered = reached(config, latest, 0.0);
        OverloadLevel held = reached(config, latest, config.hysteresis());
        String where = "seed " + seed + " step " + step;
        assertThat(after).as(where).isGreaterThanOrEqualTo(entered);
        if (after.compareTo(before) < 0) {
          assertThat(held).as(where).isLessThan(before);
          assertThat(after).as(where).isEqualTo(held);
          assertThat(now - lastHeldOrRaised)
              .as(where)
              .isGreaterThanOrEqualTo(config.cooldownNanos());
        }
        if (after != before || held.compareTo(after) >= 0) {
          lastHeldOrRaised = now;
        }
      }
    }
  }

  private static OverloadLevel reached(OverloadConfig c, double[] readings, double band) {
    OverloadLevel best = NONE;
    for (OverloadResource res : OverloadResource.values()) {
      for (OverloadLevel l : OverloadLevel.values()) {
        double th = c.threshold(res, l);
        double v = readings[res.ordinal()];
        if (l != NONE && !Double.isNaN(th) && !Double.isNaN(v) && v >= th * (1 - band)) {
          best = l.compareTo(best) > 0 ? l : best;
        }
      }
    }
    return best;
  }
}
