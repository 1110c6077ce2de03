package dev.parapet.core.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.parapet.core.time.ManualTicker;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The load is CPU time over wall time times processors, since the previous sample. */
class ProcessCpuSamplerTest {
  private final ManualTicker clock = new ManualTicker();
  private final AtomicLong cpu = new AtomicLong();

  @Test
  void loadIsCpuTimeOverWallTimeAndProcessorsSinceThePreviousSample() {
    ProcessCpuSampler s = new ProcessCpuSampler(cpu::get, clock, 4);
    clock.advance(Duration.ofMillis(500));
    cpu.addAndGet(Duration.ofMillis(1000).toNanos()); // two of four cores busy
    assertThat(s.sample()).isCloseTo(0.5, within(1e-9));

    clock.advance(Duration.ofMillis(500));
    cpu.addAndGet(Duration.ofMillis(200).toNanos());
    assertThat(s.sample()).as("only the last interval counts").isCloseTo(0.1, within(1e-9));
  }

  @Test
  void noTimePassedOrNoCpuTimeIsUnknownNotZero() {
    ProcessCpuSampler s = new ProcessCpuSampler(cpu::get, clock, 2);
    assertThat(s.sample()).isNaN();

    ProcessCpuSampler none = new ProcessCpuSampler(() -> -1, clock, 2);
    clock.advance(Duration.ofSeconds(1));
    assertThat(none.sample()).isNaN();
  }

  @Test
  void readingsStayWithinZeroAndOneWhateverTheSourcesDo() {
    for (long seed = 1; seed <= 200; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      ManualTicker t = new ManualTicker();
      AtomicLong c = new AtomicLong(r.nextLong(0, 1_000_000_000L));
      ProcessCpuSampler s = new ProcessCpuSampler(c::get, t, 1 + r.nextInt(64));
      for (int i = 0; i < 50; i++) {
        t.advance(Duration.ofNanos(r.nextLong(0, 2_000_000_000L)));
        // CPU time may run ahead of wall time times processors (threads counted twice by the OS,
        // coarse clocks) and a platform may stop reporting it: the reading is clamped or NaN.
        c.set(r.nextInt(10) == 0 ? -1 : Math.max(0, c.get()) + r.nextLong(0, 4_000_000_000L));
        double load = s.sample();
        assertThat(Double.isNaN(load) || (load >= 0.0 && load <= 1.0))
            .as("seed %d step %d: %s", seed, i, load)
            .isTrue();
      }
    }
  }

  @Test
  void atLeastOneProcessor() {
    assertThatThrownBy(() -> new ProcessCpuSampler(cpu::get, clock, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("processors : 0");
  }
}
