package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.RandomSource;
import org.junit.jupiter.api.Test;

class SimRandomTest {
  @Test
  void drawsTheCoreSeededSequenceValueForValue() {
    for (long seed : new long[] {0, 1, 7, -3, Long.MAX_VALUE}) {
      RandomSource core = RandomSource.seeded(seed);
      RandomSource coreForInts = RandomSource.seeded(seed);
      SimRandom sim = new SimRandom(seed);
      SimRandom simForInts = new SimRandom(seed);
      for (int i = 0; i < 10_000; i++) {
        assertThat(sim.nextDouble()).as("seed %d draw %d", seed, i).isEqualTo(core.nextDouble());
        assertThat((long) simForInts.nextInt(4096)).isEqualTo(coreForInts.nextLong(4096));
      }
    }
  }
}
