package dev.parapet.core.latency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RollingLatencyHistogramTest {
  private static final long MS = 1_000_000L;

  @Test
  void emptyWindowHasNoData() {
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(0);
    assertThat(h.quantile(0.95, 0)).isEqualTo(RollingLatencyHistogram.NO_DATA);
    assertThat(h.count(0)).isZero();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 3_000_000_000L, Long.MIN_VALUE + 7})
  void quantilesOfOneToHundredMillis(long start) {
    ManualTicker ticker = new ManualTicker(start);
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(ticker.read());
    for (int i = 1; i <= 100; i++) {
      h.record(i * MS, ticker.read());
      ticker.advance(MS); // crosses Long.MAX_VALUE for the second start value
    }
    long now = ticker.read();
    assertThat(h.count(now)).isEqualTo(100);
    assertThat((double) h.quantile(0.50, now)).isCloseTo(50 * MS, within(50 * MS / 64.0));
    assertThat((double) h.quantile(0.95, now)).isCloseTo(95 * MS, within(95 * MS / 64.0));
    assertThat((double) h.quantile(0.99, now)).isCloseTo(99 * MS, within(99 * MS / 64.0));
    assertThat((double) h.quantile(1.0, now)).isCloseTo(100 * MS, within(100 * MS / 64.0));
  }

  @Test
  void samplesAgeOutOneSubWindowAtATime() {
    ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - 5 * MS);
    // 10 s in 5 slices of 2 s
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(ticker.read());
    h.record(900 * MS, ticker.read()); // slice 0
    ticker.advance(Duration.ofSeconds(2));
    h.record(10 * MS, ticker.read()); // slice 1
    assertThat(h.count(ticker.read())).isEqualTo(2);

    ticker.advance(Duration.ofSeconds(7)); // now in slice 4: slice 0 still counts
    assertThat(h.count(ticker.read())).isEqualTo(2);
    assertThat(h.quantile(1.0, ticker.read())).isBetween(880 * MS, 920 * MS);

    ticker.advance(Duration.ofSeconds(1)); // slice 5: slice 0 has aged out, without any record
    assertThat(h.count(ticker.read())).isEqualTo(1);
    assertThat(h.quantile(1.0, ticker.read())).isBetween(9 * MS, 11 * MS);

    ticker.advance(Duration.ofSeconds(2)); // slice 6: everything gone
    assertThat(h.quantile(0.5, ticker.read())).isEqualTo(RollingLatencyHistogram.NO_DATA);
  }

  @Test
  void reusedSubWindowStartsEmpty() {
    ManualTicker ticker = new ManualTicker();
    RollingLatencyHistogram h = new RollingLatencyHistogram(Duration.ofSeconds(4), 2, 0);
    for (int i = 0; i < 50; i++) {
      h.record(5 * MS, ticker.read());
    }
    ticker.advance(Duration.ofSeconds(4)); // same slot index, two slices later
    h.record(70 * MS, ticker.read());
    assertThat(h.count(ticker.read())).isEqualTo(1);
    assertThat(h.quantile(0.01, ticker.read())).isBetween(69 * MS, 71 * MS);
  }

  @Test
  void lateSampleForAReusedSliceIsDropped() {
    RollingLatencyHistogram h = new RollingLatencyHistogram(Duration.ofSeconds(4), 2, 0);
    long now = Duration.ofSeconds(5).toNanos(); // slice 2, slot 0
    h.record(3 * MS, now);
    h.record(100 * MS, 0); // slice 0, slot 0: too old, must not pollute slice 2
    assertThat(h.count(now)).isEqualTo(1);
    assertThat(h.quantile(1.0, now)).isBetween(2 * MS, 4 * MS);
  }

  @Test
  void hugeAndNegativeLatenciesAreClamped() {
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(0);
    h.record(Long.MAX_VALUE, 0);
    h.record(-1, 0);
    assertThat(h.quantile(1.0, 0))
        .isCloseTo(RollingLatencyHistogram.MAX_TRACKABLE_NANOS, within(1L << 34));
    assertThat(h.quantile(0.5, 0)).isZero();
  }

  @Test
  void rejectsBadArguments() {
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(0);
    assertThatThrownBy(() -> h.quantile(0.0, 0)).hasMessage("q : 0.0 (expected: in (0, 1])");
    assertThatThrownBy(() -> h.quantile(1.5, 0)).hasMessage("q : 1.5 (expected: in (0, 1])");
    assertThatThrownBy(() -> new RollingLatencyHistogram(Duration.ofSeconds(1), 1, 0))
        .hasMessage("subWindows : 1 (expected: in [2, 60])");
    assertThatThrownBy(() -> new RollingLatencyHistogram(Duration.ZERO, 5, 0))
        .hasMessage("window : PT0S (expected: > 0)");
  }

  /**
   * Property: every quantile is within 1/64 of the exact nearest-rank sample of the live window.
   */
  @Test
  void quantilesMatchSortedReferenceWithinStatedError() {
    for (long seed = 1; seed <= 40; seed++) {
      runAgainstReference(seed);
    }
  }

  private static void runAgainstReference(long seed) {
    RandomSource random = RandomSource.seeded(seed);
    long start = seed % 2 == 0 ? Long.MAX_VALUE - 20_000 * MS : seed * 12_345;
    int slices = 2 + (int) random.nextLong(7);
    long windowNanos = (1 + random.nextLong(20)) * 1000 * MS;
    long slice = windowNanos / slices;
    RollingLatencyHistogram h =
        new RollingLatencyHistogram(Duration.ofNanos(windowNanos), slices, start);
    List<long[]> reference = new ArrayList<>(); // {epoch, latency}
    long now = start;
    for (int step = 0; step < 3_000; step++) {
      now += random.nextLong(slice / 4 + 1);
      long latency = (long) Math.pow(2, random.nextDouble() * 36); // 1 ns .. ~69 s
      h.record(latency, now);
      reference.add(new long[] {Math.floorDiv(now - start, slice), latency});
      if (step % 50 == 0) {
        long current = Math.floorDiv(now - start, slice);
        List<Long> live = new ArrayList<>();
        for (long[] r : reference) {
          if (current - r[0] < slices) {
            live.add(r[1]);
          }
        }
        live.sort(null);
        assertThat(h.count(now)).as("seed %d step %d count", seed, step).isEqualTo(live.size());
        for (double q : new double[] {0.5, 0.9, 0.95, 0.99, 1.0}) {
          long rank = Math.max(1L, (long) Math.ceil(q * live.size()));
          long exact = live.get((int) rank - 1);
          long estimate = h.quantile(q, now);
          assertThat(Math.abs(estimate - exact) / (double) Math.max(1, exact))
              .as("seed %d step %d q %s exact %d estimate %d", seed, step, q, exact, estimate)
              .isLessThanOrEqualTo(RollingLatencyHistogram.MAX_RELATIVE_ERROR);
        }
      }
    }
  }

  @Test
  void concurrentRecordersLoseNothingWithinOneSlice() throws InterruptedException {
    RollingLatencyHistogram h = RollingLatencyHistogram.withDefaults(0);
    int threads = 4;
    int perThread = 50_000;
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      long latency = (t + 1) * 10 * MS;
      Thread w =
          new Thread(() -> {
            try {
              go.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
            for (int i = 0; i < perThread; i++) {
              h.record(latency, 1_000 + i);
            }
          });
      w.start();
      workers.add(w);
    }
    go.countDown();
    for (Thread w : workers) {
      w.join();
    }
    assertThat(h.count(1_000)).isEqualTo((long) threads * perThread);
    assertThat(h.quantile(0.25, 1_000)).isBetween(9 * MS, 11 * MS);
    assertThat(h.quantile(1.0, 1_000)).isBetween(39 * MS, 41 * MS);
  }
}
