package dev.parapet.sim.replay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.Permit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class InFlightTest {
  private static final long BUCKET = 1L << InFlight.SHIFT;
  private static final long RING = BUCKET * InFlight.BUCKETS;

  /** A call: its end and its arrival number; the permit identifies it when it comes out. */
  private record Call(long end, long seq, Permit permit) {}

  private static final Comparator<Call> ORDER =
      Comparator.comparingLong(Call::end).thenComparingLong(Call::seq);

  @Test
  void callsComeOutByEndThenArrivalWhateverTheLatencies() {
    SplittableRandom r = new SplittableRandom(7);
    for (int round = 0; round < 8; round++) {
      check(r, round);
    }
  }

  private static void check(SplittableRandom r, int round) {
    InFlight f = new InFlight();
    PriorityQueue<Call> pending = new PriorityQueue<>(ORDER);
    List<Call> expected = new ArrayList<>();
    List<Permit> actual = new ArrayList<>();
    long now = r.nextLong(1L << 40);
    long seq = 0;
    for (int i = 0; i < 20_000; i++) {
      // time moves by nothing, a little, a bucket, or past the whole ring
      int step = r.nextInt(100);
      now +=
          step < 30
              ? 0
              : step < 90 ? r.nextLong(BUCKET / 4) : step < 98 ? r.nextLong(BUCKET * 8) : RING * 2;
      drain(f, now, pending, expected, actual);
      int kind = r.nextInt(100);
      long latency =
          kind < 20
              ? 0 // ends now: ties with other calls and with the next start
              : kind < 40
                  ? r.nextLong(4) * 1_000_000L // equal ends are common in real logs
                  : kind < 95 ? r.nextLong(200_000_000L) : r.nextLong(3 * RING);
      Call c = new Call(now + latency, seq++, new Permit());
      pending.add(c);
      f.push(c.end, c.permit, (byte) round);
      assertThat(f.maxSize()).isGreaterThanOrEqualTo(pending.size());
    }
    drain(f, Long.MAX_VALUE, pending, expected, actual);
    assertThat(pending).isEmpty();
    assertThat(actual).containsExactlyElementsOf(expected.stream().map(Call::permit).toList());
  }

  private static void drain(
      InFlight f, long now, PriorityQueue<Call> pending, List<Call> expected, List<Permit> actual) {
    while (!pending.isEmpty() && pending.peek().end < now) {
      expected.add(pending.poll());
    }
    while (f.pollBefore(now)) {
      assertThat(f.polledEnd).isLessThan(now);
      actual.add(f.polledPermit);
    }
    assertThat(actual).hasSameSizeAs(expected);
  }

  @Test
  void memoryFollowsTheCallsInFlightNotTheirNumber() {
    InFlight f = new InFlight();
    long now = 0;
    for (int i = 0; i < 200_000; i++) {
      now += 100_000; // 10,000 calls a second, each 50 ms long: 500 in flight
      while (f.pollBefore(now)) {
        // completed
      }
      f.push(now + 50_000_000L, new Permit(), (byte) 0);
    }
    assertThat(f.maxSize()).isBetween(500, 501);
    assertThat(f.capacity()).isLessThanOrEqualTo(1024);
  }
}
