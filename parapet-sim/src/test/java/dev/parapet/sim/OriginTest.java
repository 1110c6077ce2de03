package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.outcome.Outcome;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The origin's capacity rules, one at a time, on a fixed service time. */
class OriginTest {
  private static final long MS = 1_000_000L;
  private static final long SECOND = 1_000_000_000L;

  private static Origin origin(OriginCapacity capacity, double hangRate) {
    OriginPhase fixed =
        new OriginPhase("p", 1000, 100, 0, 0, hangRate, false, OriginPhase.Distribution.FIXED);
    return new Origin(List.of(fixed), capacity, 1, new SimRandom(1), 1000, 10 * MS);
  }

  @Test
  void workBeyondTheWorkersWaitsSoLatencyGrowsWithTheQueue() {
    Origin o = origin(new OriginCapacity(2, OriginCapacity.UNBOUNDED, false), 0);
    // Five attempts at once, two workers, 100 ms each: answers at 100, 100, 200, 200, 300 ms.
    long[] holds = new long[5];
    for (int i = 0; i < 5; i++) {
      holds[i] = o.serve(0, 10 * SECOND);
      assertThat(o.lastFailure()).isNull();
    }
    assertThat(holds).containsExactly(100 * MS, 100 * MS, 200 * MS, 200 * MS, 300 * MS);
    // The same with unlimited workers: every answer after its service time.
    Origin unlimited = origin(OriginCapacity.UNLIMITED, 0);
    for (int i = 0; i < 5; i++) {
      assertThat(unlimited.serve(0, 10 * SECOND)).isEqualTo(100 * MS);
    }
  }

  @Test
  void aFullQueueRefusesAtOnceAndFreesAsItDrains() {
    Origin o = origin(new OriginCapacity(1, 2, false), 0);
    o.serve(0, 10 * SECOND); // in service until 100 ms
    o.serve(0, 10 * SECOND); // queued until 100 ms
    o.serve(0, 10 * SECOND); // queued until 200 ms
    o.serve(0, 10 * SECOND);
    assertThat(o.lastFailure()).isEqualTo(Outcome.CONNECT_FAILURE);
    // At 100 ms the first queued attempt starts: one place is free again.
    assertThat(o.serve(100 * MS, 10 * SECOND)).isEqualTo(300 * MS - 100 * MS + 100 * MS);
    assertThat(o.lastFailure()).isNull();
  }

  @Test
  void workThatCannotEndBeforeItsDeadlineIsDroppedOrServedAsTheScenarioSays() {
    for (boolean serve : new boolean[] {false, true}) {
      Origin o = origin(new OriginCapacity(1, OriginCapacity.UNBOUNDED, serve), 0);
      o.serve(0, 150 * MS); // 0 to 100 ms: answered
      assertThat(o.lastFailure()).isNull();
      long hold = o.serve(0, 150 * MS); // would end at 200 ms, after its 150 ms deadline
      assertThat(hold).isEqualTo(150 * MS);
      assertThat(o.lastFailure()).isEqualTo(Outcome.TIMEOUT);
      // Dropped, it never took the worker: the next attempt starts at 100 ms; served, at 200 ms.
      o.serve(0, 10 * SECOND);
      assertThat(o.lastWaitNanos())
          .as("serve abandoned: %s", serve)
          .isEqualTo(serve ? 200 * MS : 100 * MS);
      assertThat(o.totalBusyNanos()).isEqualTo(serve ? 300 * MS : 200 * MS);
    }
  }

  @Test
  void hungAttemptsHoldTheirWorkerUntilTheClientGivesUp() {
    Origin o = origin(new OriginCapacity(1, OriginCapacity.UNBOUNDED, false), 1.0);
    assertThat(o.serve(0, 500 * MS)).isEqualTo(500 * MS);
    assertThat(o.lastFailure()).isEqualTo(Outcome.TIMEOUT);
    o.serve(10 * MS, 2 * SECOND);
    assertThat(o.lastWaitNanos()).isEqualTo(490 * MS);
  }

  @Test
  void servingAbandonedWorkCollapsesGoodputUnderOverloadDroppingItDoesNot() {
    // Offered 1.5x capacity for 200 s, 1 s patience, an unbounded queue.
    double[] goodput = new double[2];
    for (int mode = 0; mode < 2; mode++) {
      Origin o = origin(new OriginCapacity(10, OriginCapacity.UNBOUNDED, mode == 1), 0);
      long answered = 0;
      long gap = SECOND / 150; // 150 attempts/s against 10 / 100 ms = 100/s
      for (long t = 0; t < 200 * SECOND; t += gap) {
        o.serve(t, SECOND);
        if (o.lastFailure() == null && t > 100 * SECOND) {
          answered++;
        }
      }
      goodput[mode] = answered / 100.0;
    }
    assertThat(goodput[0]).as("abandoned work dropped").isGreaterThan(90);
    assertThat(goodput[1]).as("abandoned work served").isLessThan(1);
  }
}
