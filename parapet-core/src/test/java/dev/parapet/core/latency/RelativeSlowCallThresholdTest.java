package dev.parapet.core.latency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.outcome.SlowCallThreshold;
import dev.parapet.core.time.ManualTicker;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The outcome model's relative slow-call threshold driven by a real {@link CachedQuantile}. */
class RelativeSlowCallThresholdTest {
  private static final long MS = 1_000_000L;

  @Test
  void absoluteThreshold() {
    SlowCallThreshold slow = SlowCallThreshold.absolute(Duration.ofMillis(500));
    assertThat((500 * MS > slow.thresholdNanos(0))).isFalse();
    assertThat((500 * MS + 1 > slow.thresholdNanos(0))).isTrue();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 50 * MS})
  void relativeThresholdFollowsTheOriginsP95(long start) {
    ManualTicker ticker = new ManualTicker(start);
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(start);
    CachedQuantile p95 = new CachedQuantile(h, 0.95, 20, Duration.ofMillis(100));
    SlowCallThreshold slow = SlowCallThreshold.relative(3.0, p95::nanos, Duration.ofMillis(20));
    assertThat((10_000 * MS > slow.thresholdNanos(ticker.read()))).as("no baseline yet").isFalse();
    for (int i = 1; i <= 100; i++) {
      h.record(2 * i * MS, ticker.read()); // p95 = 190 ms
    }
    ticker.advance(100 * MS); // crosses Long.MAX_VALUE for the second start: cache refreshes
    long threshold = slow.thresholdNanos(ticker.read());
    assertThat(threshold).isBetween(3 * 187 * MS, 3 * 193 * MS);
    assertThat((threshold > slow.thresholdNanos(ticker.read()))).isFalse();
    assertThat((threshold + 1 > slow.thresholdNanos(ticker.read()))).isTrue();
  }

  @Test
  void floorProtectsVeryFastOrigins() {
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(0);
    for (int i = 0; i < 100; i++) {
      h.record(2 * MS, 0);
    }
    SlowCallThreshold slow =
        SlowCallThreshold.relative(
            3.0,
            new CachedQuantile(h, 0.95, 20, Duration.ofMillis(100))::nanos,
            Duration.ofMillis(20));
    assertThat(slow.thresholdNanos(0)).isEqualTo(20 * MS);
    assertThat((7 * MS > slow.thresholdNanos(0))).isFalse();
  }

  @Test
  void cachedQuantileWaitsForEnoughSamplesAndRefreshesOnSchedule() {
    ManualTicker ticker = new ManualTicker();
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(0);
    CachedQuantile p50 = new CachedQuantile(h, 0.5, 3, Duration.ofMillis(100));
    h.record(10 * MS, 0);
    h.record(10 * MS, 0);
    assertThat(p50.nanos(ticker.read())).isEqualTo(RollingLatencyHistogram.NO_DATA);
    h.record(10 * MS, 0);
    ticker.advance(99 * MS);
    assertThat(p50.nanos(ticker.read())).as("cached").isEqualTo(RollingLatencyHistogram.NO_DATA);
    ticker.advance(1 * MS);
    assertThat(p50.nanos(ticker.read())).isBetween(9 * MS, 11 * MS);
  }

  @Test
  void rejectsBadConfiguration() {
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(0);
    CachedQuantile q = new CachedQuantile(h, 0.95, 20, Duration.ofMillis(100));
    assertThatThrownBy(() -> SlowCallThreshold.relative(0.5, q::nanos, Duration.ZERO))
        .hasMessage("slow.threshold multiplier : 0.5 (expected: in [1, 1000])");
    assertThatThrownBy(() -> new CachedQuantile(h, 0.95, 0, Duration.ofMillis(100)))
        .hasMessage("minSamples : 0 (expected: >= 1)");
    assertThatThrownBy(() -> SlowCallThreshold.absolute(Duration.ZERO))
        .hasMessage("slow.threshold : PT0S (expected: > 0)");
  }
}
