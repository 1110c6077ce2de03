package dev.parapet.core.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.outcome.Outcome.Kind;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WindowTest {
  private static final long MS = 1_000_000L;

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 5_000 * MS, Long.MIN_VALUE + 3 * MS, -42L})
  void timeWindowCountsAndAgesOut(long start) {
    TimeWindow w = new TimeWindow(Duration.ofSeconds(10), 100, start);
    long t = start;
    w.record(Kind.SUCCESS, t);
    w.record(Kind.FAILURE, t);
    w.record(Kind.SLOW, t + 50 * MS);
    w.record(Kind.IGNORED, t + 50 * MS);
    assertThat(w.calls(t + 60 * MS)).isEqualTo(3);
    assertThat(w.failures(t + 60 * MS)).isEqualTo(1);
    assertThat(w.slowCalls(t + 60 * MS)).isEqualTo(1);

    t += 5_000 * MS; // crosses Long.MAX_VALUE for one start value
    w.record(Kind.FAILURE, t);
    assertThat(w.calls(t)).isEqualTo(4);
    assertThat(w.failures(t)).isEqualTo(2);

    // The first three were in bucket 0: gone once bucket 100 begins.
    assertThat(w.calls(start + 9_999 * MS)).isEqualTo(4);
    assertThat(w.calls(start + 10_000 * MS)).isEqualTo(1);
    assertThat(w.failures(start + 10_000 * MS)).isEqualTo(1);
    assertThat(w.slowCalls(start + 10_000 * MS)).isZero();
    // and with no records at all, everything ages out
    assertThat(w.calls(start + 15_000 * MS)).isZero();
    assertThat(w.calls(start + 3_600_000 * MS)).isZero();
  }

  @Test
  void timeWindowDropsEvidenceAWholeWindowOld() {
    TimeWindow w = TimeWindow.ofDefaults(0);
    w.record(Kind.SUCCESS, 20_000 * MS);
    w.record(Kind.FAILURE, 9_000 * MS); // eleven seconds behind the head: dropped
    w.record(Kind.FAILURE, 19_950 * MS); // a straggler within the window counts in the head
    assertThat(w.calls(20_000 * MS)).isEqualTo(2);
    assertThat(w.failures(20_000 * MS)).isEqualTo(1);
  }

  @Test
  void resetForgetsEverything() {
    TimeWindow tw = TimeWindow.ofDefaults(0);
    CountWindow cw = new CountWindow(10);
    for (OutcomeWindow w : new OutcomeWindow[] {tw, cw}) {
      w.record(Kind.FAILURE, 0);
      w.reset(MS);
      assertThat(w.calls(MS)).isZero();
      w.record(Kind.SUCCESS, 2 * MS);
      assertThat(w.calls(2 * MS)).isEqualTo(1);
      assertThat(w.read(2 * MS)).isEqualTo(new OutcomeWindow.Reading(1, 0, 0));
    }
  }

  @Test
  void countWindowKeepsTheLastN() {
    CountWindow w = new CountWindow(3);
    w.record(Kind.FAILURE, 0);
    w.record(Kind.SLOW, 0);
    w.record(Kind.SUCCESS, 0);
    assertThat(w.read(0)).isEqualTo(new OutcomeWindow.Reading(3, 1, 1));
    w.record(Kind.SUCCESS, 0); // evicts the failure
    assertThat(w.read(0)).isEqualTo(new OutcomeWindow.Reading(3, 0, 1));
    w.record(Kind.IGNORED, 0); // not a call
    w.record(Kind.SUCCESS, 0); // evicts the slow call
    assertThat(w.read(0)).isEqualTo(new OutcomeWindow.Reading(3, 0, 0));
  }

  @Test
  void readingRates() {
    OutcomeWindow.Reading r = new OutcomeWindow.Reading(10, 4, 2);
    assertThat(r.weightedFailureRate(0.5)).isEqualTo(0.5);
    assertThat(r.slowRate()).isEqualTo(0.2);
    assertThat(new OutcomeWindow.Reading(0, 0, 0).weightedFailureRate(0.5)).isZero();
  }

  @Test
  void invalidWindowsSayWhatWasExpected() {
    assertThatThrownBy(() -> new TimeWindow(Duration.ofSeconds(10), 0, 0))
        .hasMessage("buckets : 0 (expected: in [1, 10000])");
    assertThatThrownBy(() -> new TimeWindow(Duration.ofMillis(10), 100, 0))
        .hasMessageContaining("expected: >= 1ms per bucket");
    assertThatThrownBy(() -> new CountWindow(0)).hasMessage("size : 0 (expected: in [1, 1000000])");
  }

  /**
   * Property: after any seeded random sequence of records and time steps, the time window's counts
   * equal a reference model that keeps every event and counts those whose bucket lies within the
   * last 100 buckets of the head.
   */
  @Test
  void timeWindowMatchesReferenceModel() {
    for (long seed = 1; seed <= 200; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      long start = rnd.nextBoolean() ? rnd.nextLong() : Long.MAX_VALUE - rnd.nextLong(20_000 * MS);
      long bucket = 100 * MS;
      TimeWindow w = new TimeWindow(Duration.ofSeconds(10), 100, start);
      Deque<long[]> events = new ArrayDeque<>(); // {bucketSeq, kind}
      long now = start;
      long headSeq = 0;
      for (int step = 0; step < 2_000; step++) {
        int op = rnd.nextInt(10);
        if (op < 2) {
          now += rnd.nextLong(rnd.nextInt(20) == 0 ? 15_000 * MS : 300 * MS);
        } else {
          Kind k = Kind.values()[rnd.nextInt(4)];
          w.record(k, now);
          long seq = Math.floorDiv(now - start, bucket);
          headSeq = Math.max(headSeq, seq);
          if (k != Kind.IGNORED) {
            events.add(new long[] {headSeq, k.ordinal()});
          }
        }
        if (rnd.nextInt(7) == 0) {
          long seq = Math.floorDiv(now - start, bucket);
          headSeq = Math.max(headSeq, seq);
          long calls = 0;
          long failures = 0;
          long slow = 0;
          for (long[] e : events) {
            if (headSeq - e[0] < 100) {
              calls++;
              failures += e[1] == Kind.FAILURE.ordinal() ? 1 : 0;
              slow += e[1] == Kind.SLOW.ordinal() ? 1 : 0;
            }
          }
          OutcomeWindow.Reading r = w.read(now);
          assertThat(r)
              .as("seed %d step %d", seed, step)
              .isEqualTo(new OutcomeWindow.Reading(calls, failures, slow));
        }
      }
    }
  }

  /** Property: the count window equals the last N non-ignored outcomes. */
  @Test
  void countWindowMatchesReferenceModel() {
    for (long seed = 1; seed <= 200; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      int n = 1 + rnd.nextInt(50);
      CountWindow w = new CountWindow(n);
      Deque<Kind> last = new ArrayDeque<>();
      for (int step = 0; step < 1_000; step++) {
        Kind k = Kind.values()[rnd.nextInt(4)];
        w.record(k, step);
        if (k != Kind.IGNORED) {
          last.addLast(k);
          if (last.size() > n) {
            last.removeFirst();
          }
        }
        long failures = last.stream().filter(x -> x == Kind.FAILURE).count();
        long slow = last.stream().filter(x -> x == Kind.SLOW).count();
        assertThat(w.read(step))
            .as("seed %d step %d", seed, step)
            .isEqualTo(new OutcomeWindow.Reading(last.size(), failures, slow));
      }
    }
  }

  @Test
  void recentEventsHoldOnlyWithinTheSpan() {
    RecentEvents three = new RecentEvents(3, Duration.ofSeconds(10));
    long t = Long.MAX_VALUE - 4_000 * MS; // crosses the wrap
    assertThat(three.record(t)).isFalse();
    assertThat(three.record(t + 4_000 * MS)).isFalse();
    assertThat(three.record(t + 10_000 * MS)).isTrue(); // exactly 10 s: still within
    assertThat(three.holds(t + 10_001 * MS)).isFalse();
    assertThat(three.recent(t + 10_001 * MS)).isEqualTo(2);
    assertThat(three.record(t + 14_000 * MS)).isTrue();
    assertThat(three.record(t + 30_000 * MS)).isFalse();
    three.reset();
    assertThat(three.holds(t + 30_000 * MS)).isFalse();
    assertThat(three.recent(t + 30_000 * MS)).isZero();
  }

  @Test
  void concurrentRecordsAreNeverLostWithinABucket() throws Exception {
    TimeWindow tw = new TimeWindow(Duration.ofSeconds(10), 100, 0);
    CountWindow cw = new CountWindow(1_000_000);
    int threads = 4;
    int each = 50_000;
    Thread[] ts = new Thread[threads];
    for (int i = 0; i < threads; i++) {
      ts[i] =
          new Thread(() -> {
            for (int j = 0; j < each; j++) {
              Kind k = j % 4 == 0 ? Kind.FAILURE : (j % 4 == 1 ? Kind.SLOW : Kind.SUCCESS);
              tw.record(k, 5 * MS); // one bucket: no rotation races
              cw.record(k, 0);
            }
          });
      ts[i].start();
    }
    for (Thread t : ts) {
      t.join();
    }
    long total = (long) threads * each;
    assertThat(tw.read(5 * MS)).isEqualTo(new OutcomeWindow.Reading(total, total / 4, total / 4));
    assertThat(cw.read(0)).isEqualTo(new OutcomeWindow.Reading(total, total / 4, total / 4));
  }

  @Test
  void recordsRacingWithRotationsAreNeverLost() throws Exception {
    TimeWindow w = new TimeWindow(Duration.ofSeconds(10), 100, 0);
    java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong();
    int threads = 4;
    int each = 20_000;
    Thread[] ts = new Thread[threads];
    for (int i = 0; i < threads; i++) {
      ts[i] =
          new Thread(() -> {
            for (int j = 0; j < each; j++) {
              // 10 us per record across all threads: 0.8 s in all, eight bucket rotations
              w.record(j % 2 == 0 ? Kind.FAILURE : Kind.SUCCESS, clock.addAndGet(10_000));
            }
          });
      ts[i].start();
    }
    for (Thread t : ts) {
      t.join();
    }
    long total = (long) threads * each;
    assertThat(w.read(clock.get())).isEqualTo(new OutcomeWindow.Reading(total, total / 2, 0));
  }
}
