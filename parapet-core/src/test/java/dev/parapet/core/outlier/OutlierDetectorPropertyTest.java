package dev.parapet.core.outlier;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Seeded random sequences against a plain sequential model of the rules, and a multi-threaded run
 * that checks the max-ejected ceiling under concurrent recording.
 */
class OutlierDetectorPropertyTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void matchesTheReferenceModelAndNeverExceedsTheMaximum() {
    int[] kinds = new int[OutlierEvent.Kind.values().length];
    int[] reasons = new int[EjectionReason.values().length];
    for (long seed = 1; seed <= 200; seed++) {
      SplittableRandom random = new SplittableRandom(seed);
      int hosts = 1 + random.nextInt(12);
      double maxFraction = random.nextInt(5) * 0.25;
      OutlierConfig config =
          new OutlierConfig(
              1 + random.nextInt(6),
              random.nextInt(4),
              0.3 + random.nextDouble() * 0.7,
              1 + random.nextInt(30),
              SECOND,
              3 * SECOND,
              3 * SECOND * (1 + random.nextInt(4)),
              maxFraction);
      long start = random.nextBoolean() ? 0L : Long.MAX_VALUE - 20 * SECOND;
      List<OutlierEvent> events = new ArrayList<>();
      OutlierDetector d = new OutlierDetector(hosts, config, events::add, start);
      Model m = new Model(hosts, config, start);
      long now = start;
      int maxEjected = (int) Math.floor(maxFraction * hosts + 1e-9);
      for (int step = 0; step < 3000; step++) {
        int host = random.nextInt(hosts);
        // Hosts fail with host-specific probabilities so some are real outliers.
        double failP = (host % 3 == 0) ? 0.8 : 0.1;
        int roll = random.nextInt(100);
        if (roll < 5) {
          now += random.nextLong(SECOND / 2);
          d.advance(now);
          m.advance(now);
        } else if (random.nextDouble() < failP) {
          int status = roll < 15 ? -1 : (roll < 40 ? 500 : 502 + random.nextInt(3));
          if (status < 0) {
            d.recordConnectFailure(host, now);
          } else {
            d.recordStatus(host, status, now);
          }
          m.record(host, status, now);
        } else {
          d.recordStatus(host, roll < 50 ? 200 : 404, now);
          m.record(host, 200, now);
        }
        // Plain comparisons first (this loop runs 600 000 times); AssertJ reports a mismatch.
        boolean same = d.ejectedHosts() == m.ejectedCount && m.ejectedCount <= maxEjected;
        for (int h = 0; h < hosts && same; h++) {
          same = d.isEjected(h) == m.ejected[h] && d.ejectionMultiplier(h) == m.multiplier[h];
        }
        if (!same) {
          String where = "seed " + seed + " step " + step;
          assertThat(d.ejectedHosts())
              .as(where)
              .isEqualTo(m.ejectedCount)
              .isLessThanOrEqualTo(maxEjected);
          for (int h = 0; h < hosts; h++) {
            assertThat(d.isEjected(h)).as(where + " host " + h).isEqualTo(m.ejected[h]);
            assertThat(d.ejectionMultiplier(h)).as(where + " host " + h).isEqualTo(m.multiplier[h]);
          }
        }
      }
      for (OutlierEvent e : events) {
        kinds[e.kind().ordinal()]++;
        reasons[e.reason().ordinal()]++;
      }
    }
    // The sequences must reach every rule and the ceiling, or the comparison proves little.
    assertThat(kinds).as("events by kind").doesNotContain(0);
    assertThat(reasons).as("events by reason").doesNotContain(0);
  }

  @Test
  void concurrentRecordersNeverEjectMoreThanTheMaximum() throws Exception {
    int hosts = 10;
    OutlierDetector d =
        new OutlierDetector(hosts, OutlierConfig.defaults(), OutlierListener.NONE, 0L);
    int threads = 4;
    CountDownLatch go = new CountDownLatch(1);
    AtomicInteger violations = new AtomicInteger();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      Thread w =
          new Thread(() -> {
            SplittableRandom r = new SplittableRandom(id);
            try {
              go.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
            for (int i = 0; i < 100_000; i++) {
              int h = r.nextInt(hosts);
              d.recordStatus(h, r.nextInt(4) == 0 ? 200 : 503, i);
              if (i % 1000 == 0) {
                d.advance(i * 1000L);
              }
              int ejected = 0;
              for (int k = 0; k < hosts; k++) {
                ejected += d.isEjected(k) ? 1 : 0;
              }
              if (ejected > d.maxEjectedHosts()) {
                violations.incrementAndGet();
              }
            }
          });
      workers.add(w);
      w.start();
    }
    go.countDown();
    for (Thread w : workers) {
      w.join();
    }
    assertThat(violations.get()).isZero();
    assertThat(d.ejectedHosts()).isEqualTo(d.maxEjectedHosts());
    int seen = 0;
    for (int k = 0; k < hosts; k++) {
      seen += d.isEjected(k) ? 1 : 0;
    }
    assertThat(seen).isEqualTo(d.ejectedHosts());
  }

  /** The rules written out plainly, one step at a time. status -1 = connect failure. */
  private static final class Model {
    final OutlierConfig c;
    final int n;
    final int[] run5xx;
    final int[] runGateway;
    final int[] requests;
    final int[] failures;
    final boolean[] ejected;
    final long[] until;
    final int[] multiplier;
    int ejectedCount;
    long intervalEnd;

    Model(int n, OutlierConfig c, long start) {
      this.c = c;
      this.n = n;
      run5xx = new int[n];
      runGateway = new int[n];
      requests = new int[n];
      failures = new int[n];
      ejected = new boolean[n];
      until = new long[n];
      multiplier = new int[n];
      intervalEnd = start + c.intervalNanos();
    }

    void record(int h, int status, long now) {
      requests[h]++;
      boolean failure = status < 0 || status >= 500;
      if (!failure) {
        run5xx[h] = 0;
        runGateway[h] = 0;
        return;
      }
      failures[h]++;
      boolean gateway = status < 0 || status == 502 || status == 503 || status == 504;
      if (gateway) {
        runGateway[h]++;
        if (c.consecutiveGatewayFailures() > 0 && runGateway[h] == c.consecutiveGatewayFailures()) {
          run5xx[h] = 0;
          runGateway[h] = 0;
          maybeEject(h, now);
        }
      } else {
        runGateway[h] = 0;
      }
      run5xx[h]++;
      if (c.consecutive5xx() > 0 && run5xx[h] == c.consecutive5xx()) {
        run5xx[h] = 0;
        runGateway[h] = 0;
        maybeEject(h, now);
      }
    }

    void maybeEject(int h, long now) {
      if (ejected[h]) {
        return;
      }
      if (ejectedCount + 1 > Math.floor(c.maxEjectedFraction() * n + 1e-9)) {
        return;
      }
      if (c.baseEjectionNanos() * multiplier[h] < c.maxEjectionNanos()) {
        multiplier[h]++;
      }
      until[h] = now + Math.min(c.baseEjectionNanos() * multiplier[h], c.maxEjectionNanos());
      ejected[h] = true;
      ejectedCount++;
    }

    void advance(long now) {
      boolean ended = now - intervalEnd >= 0;
      for (int h = 0; h < n; h++) {
        if (ejected[h]) {
          if (now - until[h] >= 0) {
            ejected[h] = false;
            ejectedCount--;
            run5xx[h] = 0;
            runGateway[h] = 0;
          }
        } else if (ended && multiplier[h] > 0) {
          multiplier[h]--;
        }
      }
      if (ended) {
        for (int h = 0; h < n; h++) {
          if (!ejected[h]
              && requests[h] >= c.minRequests()
              && failures[h] >= c.failurePercentage() * requests[h]) {
            maybeEject(h, now);
          }
          requests[h] = 0;
          failures[h] = 0;
        }
        intervalEnd = now + c.intervalNanos();
      }
    }
  }
}
