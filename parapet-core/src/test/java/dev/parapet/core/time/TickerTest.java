package dev.parapet.core.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TickerTest {

  @Test
  void manualTickerWrapsLikeNanoTime() {
    ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - 10);
    long before = ticker.read();
    ticker.advance(20);
    long after = ticker.read();
    assertThat(after).isNegative();
    assertThat(after - before).isEqualTo(20);
  }

  @Test
  void manualTickerRefusesGoingBack() {
    assertThatThrownBy(() -> new ManualTicker().advance(-1))
        .hasMessage("nanos : -1 (expected: >= 0)");
  }

  @Test
  void seededRandomReplays() {
    RandomSource a = RandomSource.seeded(42);
    RandomSource b = RandomSource.seeded(42);
    for (int i = 0; i < 1000; i++) {
      double x = a.nextDouble();
      assertThat(x).isEqualTo(b.nextDouble()).isGreaterThanOrEqualTo(0.0).isLessThan(1.0);
    }
  }

  @Test
  void seededRandomIsRoughlyUniform() {
    RandomSource r = RandomSource.seeded(7);
    int[] bins = new int[10];
    for (int i = 0; i < 100_000; i++) {
      bins[(int) r.nextLong(10)]++;
    }
    for (int bin : bins) {
      assertThat(bin).isBetween(9_000, 11_000);
    }
  }

  @Test
  void systemTickerIsMonotonic() {
    Ticker t = Ticker.system();
    long a = t.read();
    long b = t.read();
    assertThat(b - a).isGreaterThanOrEqualTo(0);
  }

  @Test
  void durationsSayWhatWasExpected() {
    assertThatThrownBy(() -> Durations.positiveNanos("open.base", Duration.ZERO))
        .hasMessage("open.base : PT0S (expected: > 0)");
    assertThat(Durations.saturatedNanos(Duration.ofDays(365L * 1000))).isEqualTo(Long.MAX_VALUE);
  }
}
