package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The calendar queue against a reference model: one {@link PriorityQueue} ordered by (time,
 * schedule order). Events reschedule themselves and schedule others from inside {@code fire}, at
 * the same nanosecond, within the current millisecond, across the wheel and far beyond it.
 */
class EngineTest {

  private static final class Ref implements Comparable<Ref> {
    final long at;
    final long seq;
    final int name;

    Ref(long at, long seq, int name) {
      this.at = at;
      this.seq = seq;
      this.name = name;
    }

    @Override
    public int compareTo(Ref o) {
      return at != o.at ? Long.compare(at, o.at) : Long.compare(seq, o.seq);
    }
  }

  /** Records the order events fire in, and what each schedules next (the same choices in both). */
  private static final class Run {
    final List<String> fired = new ArrayList<>();
    final SplittableRandom random;
    int names;

    Run(long seed) {
      this.random = new SplittableRandom(seed);
    }

    long delay() {
      return switch (random.nextInt(6)) {
        case 0 -> 0; // same nanosecond
        case 1 -> random.nextLong(1 << 20); // within about a millisecond
        case 2 -> random.nextLong(3_000_000_000L); // within the wheel
        case 3 -> 17_000_000_000L + random.nextLong(60_000_000_000L); // beyond the wheel
        case 4 -> 1_000_000L; // a fixed step: many ties
        default -> random.nextLong(200_000_000L);
      };
    }
  }

  private static List<String> engineOrder(long seed, long end) {
    Run run = new Run(seed);
    Engine engine = new Engine(1);
    final class E extends SimEvent {
      final int name = run.names++;
      int children;

      @Override
      void fire(long now) {
        run.fired.add(name + "@" + now);
        if (children++ < 3 && run.names < 20_000) {
          engine.schedule(this, now + run.delay());
          engine.schedule(new E(), now + run.delay());
        }
      }
    }
    for (int i = 0; i < 50; i++) {
      engine.schedule(new E(), run.delay());
    }
    engine.runUntil(end);
    return run.fired;
  }

  private static List<String> referenceOrder(long seed, long end) {
    Run run = new Run(seed);
    PriorityQueue<Ref> queue = new PriorityQueue<>();
    long[] seq = {0};
    int[] children = new int[40_000];
    for (int i = 0; i < 50; i++) {
      queue.add(new Ref(run.delay(), seq[0]++, run.names++));
    }
    while (!queue.isEmpty() && queue.peek().at <= end) {
      Ref r = queue.poll();
      run.fired.add(r.name + "@" + r.at);
      if (children[r.name]++ < 3 && run.names < 20_000) {
        queue.add(new Ref(r.at + run.delay(), seq[0]++, r.name));
        queue.add(new Ref(r.at + run.delay(), seq[0]++, run.names++));
      }
    }
    return run.fired;
  }

  @Test
  void firesInTheOrderOfOneGlobalPriorityQueue() {
    for (long seed = 1; seed <= 20; seed++) {
      long end = seed % 2 == 0 ? Long.MAX_VALUE / 4 : 40_000_000_000L;
      List<String> expected = referenceOrder(seed, end);
      assertThat(expected).as("seed %d", seed).hasSizeGreaterThan(100);
      assertThat(engineOrder(seed, end)).as("seed %d", seed).isEqualTo(expected);
    }
  }

  @Test
  void stopsAtTheEndAndKeepsTheRestForTheNextCall() {
    Engine engine = new Engine(1);
    List<Long> fired = new ArrayList<>();
    for (long t : new long[] {5, 3_000_000, 2_000_000_000L, 90_000_000_000L}) {
      engine.schedule(
          new SimEvent() {
            @Override
            void fire(long now) {
              fired.add(now);
            }
          },
          t);
    }
    engine.runUntil(1_000_000_000L);
    assertThat(fired).containsExactly(5L, 3_000_000L);
    assertThat(engine.now()).isEqualTo(1_000_000_000L);
    engine.runUntil(Long.MAX_VALUE / 4);
    assertThat(fired).containsExactly(5L, 3_000_000L, 2_000_000_000L, 90_000_000_000L);
    assertThat(engine.firedCount()).isEqualTo(4);
  }
}
