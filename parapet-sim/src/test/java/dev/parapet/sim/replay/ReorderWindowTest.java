package dev.parapet.sim.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ReorderWindowTest {
  record Rec(long start, long seq, long key) {}

  /**
   * Seeded random logs, each line up to {@code disorder} from its place: what the window releases
   * is exactly the accepted records sorted by (start, arrival), a record is dropped only when its
   * key is older than the window or it starts before one already released, and the window never
   * holds more than the records of one horizon.
   */
  @Test
  void releasesAcceptedRecordsInStartOrderLikeASort() {
    for (long seed = 1; seed <= 200; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      long window = 1 + rnd.nextLong(50);
      long disorder = rnd.nextLong(2 * window + 1);
      long latencyMax = rnd.nextBoolean() ? 0 : rnd.nextLong(30);
      long horizon = window + latencyMax;
      ReorderWindow w = new ReorderWindow(window);
      List<Rec> accepted = new ArrayList<>();
      List<Long> released = new ArrayList<>();
      long maxKey = Long.MIN_VALUE;
      long last = Long.MIN_VALUE;
      int n = 2000;
      for (int i = 0; i < n; i++) {
        long key = i + (disorder == 0 ? 0 : rnd.nextLong(disorder + 1));
        long start = key - (latencyMax == 0 ? 0 : rnd.nextLong(latencyMax + 1));
        boolean expectLate = maxKey != Long.MIN_VALUE && (key < maxKey - window || start < last);
        boolean ok = w.offer(start, 0, i, (byte) 0, key);
        assertThat(ok).as("seed %d line %d", seed, i).isEqualTo(!expectLate);
        if (ok) {
          accepted.add(new Rec(start, i, key));
          maxKey = Math.max(maxKey, key);
        }
        while (w.ready(horizon)) {
          last = w.peekStart();
          released.add((long) w.peekRoute());
          w.pop();
        }
        assertThat(w.maxSize()).isLessThanOrEqualTo((int) (horizon + disorder + 2));
      }
      while (!w.isEmpty()) {
        released.add((long) w.peekRoute());
        w.pop();
      }
      List<Long> expected =
          accepted.stream()
              .sorted(Comparator.comparingLong(Rec::start).thenComparingLong(Rec::seq))
              .map(Rec::seq)
              .toList();
      assertThat(released).as("seed %d", seed).isEqualTo(expected);
      assertThat(w.late()).isEqualTo(n - accepted.size());
    }
  }
}
