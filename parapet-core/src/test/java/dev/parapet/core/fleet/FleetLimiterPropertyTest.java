package dev.parapet.core.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Seeded random fleets of limiters over one fake shared bucket: over any window {@code W}, the
 * fleet's grants stay within {@code rate × W + burst}, plus what the proxies may hold in leases
 * ({@code instances × (lease + low-water)}) where it says so. Each failure prints its seed.
 */
class FleetLimiterPropertyTest {
  private static final long MS = 1_000_000L;
  private static final double RATE = 300;
  private static final int BURST = 30;
  private static final int INSTANCES = 3;
  private static final int LEASE = 5;
  private static final long[] WINDOWS = {10 * MS, 100 * MS, 1_000 * MS};

  static long[] seeds() {
    long[] s = new long[20];
    for (int i = 0; i < s.length; i++) {
      s[i] = 1000 + i;
    }
    return s;
  }

  /** One random run: grants' times (from the start), per instance. */
  private record Run(List<List<Long>> grants, FleetLimiter[] limiters, FakeLeaseSource source) {
    List<Long> all() {
      List<Long> a = new ArrayList<>();
      grants.forEach(a::addAll);
      a.sort(null);
      return a;
    }
  }

  /**
   * Demand of about 8x the ceiling, in random clumps at random instances, for {@code millis}; the
   * source fails between {@code outageFrom} and {@code outageTo} (ms from the start).
   */
  private static Run run(
      long seed, long start, int millis, long maxLatencyNanos, int outageFrom, int outageTo) {
    SplittableRandom r = new SplittableRandom(seed);
    ManualTicker t = new ManualTicker(start);
    FakeLeaseSource src = new FakeLeaseSource(t, RATE, BURST);
    FleetLimitSettings s =
        FleetLimitSettings.of(RATE, BURST, INSTANCES, Duration.ofMillis(5), LEASE);
    FleetLimiter[] ls = new FleetLimiter[INSTANCES];
    List<List<Long>> grants = new ArrayList<>();
    for (int i = 0; i < INSTANCES; i++) {
      ls[i] = new FleetLimiter(s, src, t, FleetLimitListener.NONE);
      grants.add(new ArrayList<>());
    }
    long end = start + millis * MS;
    while (t.read() - end < 0) {
      long elapsedMs = (t.read() - start) / MS;
      src.failing = elapsedMs >= outageFrom && elapsedMs < outageTo;
      src.latencyNanos = 50_000 + r.nextLong(maxLatencyNanos);
      int who = r.nextInt(INSTANCES);
      int clump = 1 + r.nextInt(4);
      for (int k = 0; k < clump; k++) {
        if (ls[who].tryAcquire(t.read())) {
          grants.get(who).add(t.read() - start);
        }
      }
      if (r.nextInt(10) == 0) {
        ls[r.nextInt(INSTANCES)].tick(t.read());
      }
      src.advance(r.nextLong(1, 2 * MS)); // ~1 ms between clumps of 2.5: ~2,500/s offered
    }
    return new Run(grants, ls, src);
  }

  /** The most grants in any window of {@code w} nanoseconds among sorted times. */
  private static long maxInWindow(List<Long> times, long w, long from, long to) {
    long max = 0;
    int lo = 0;
    List<Long> in = times.stream().filter(x -> x >= from && x < to).toList();
    for (int hi = 0; hi < in.size(); hi++) {
      while (in.get(hi) - in.get(lo) >= w) {
        lo++;
      }
      max = Math.max(max, hi - lo + 1);
    }
    return max;
  }

  private static long ceiling(double rate, int burst, long w) {
    return (long) Math.floor(rate * w / 1e9) + burst;
  }

  @ParameterizedTest
  @MethodSource("seeds")
  void aHealthyFleetStaysWithinTheCeilingOverAnyWindow(long seed) {
    Run run = run(seed, seed % 2 == 0 ? 0 : Long.MAX_VALUE - 500 * MS, 3_000, 3 * MS, -1, -1);
    List<Long> all = run.all();
    long slack = (long) INSTANCES * (LEASE + run.limiters[0].settings().lowWaterTokens());
    for (long w : WINDOWS) {
      assertThat(maxInWindow(all, w, 0, Long.MAX_VALUE))
          .as("seed %d, window %d ms", seed, w / MS)
          .isLessThanOrEqualTo(ceiling(RATE, BURST, w) + slack);
    }
    assertThat((long) all.size())
        .as("seed %d: demand above the ceiling gets about the ceiling", seed)
        .isGreaterThanOrEqualTo((long) (RATE * 3 * 0.9));
    for (FleetLimiter l : run.limiters) {
      assertThat(l.mode()).as("seed %d", seed).isEqualTo(FleetMode.SHARED);
    }
    assertThat(run.source.given).isLessThanOrEqualTo(ceiling(RATE, BURST, 3_000 * MS) + 1);
  }

  @ParameterizedTest
  @MethodSource("seeds")
  void withTheSourceDownEachProxyKeepsToItsShare(long seed) {
    Run run = run(seed, seed % 2 == 0 ? 0 : Long.MAX_VALUE - 500 * MS, 2_000, MS, 0, 10_000);
    FleetLimitSettings s = run.limiters[0].settings();
    for (int i = 0; i < INSTANCES; i++) {
      for (long w : WINDOWS) {
        assertThat(maxInWindow(run.grants.get(i), w, 0, Long.MAX_VALUE))
            .as("seed %d, instance %d, window %d ms", seed, i, w / MS)
            .isLessThanOrEqualTo(ceiling(s.localRatePerSecond(), s.localBurst(), w));
      }
      assertThat(run.limiters[i].mode()).isEqualTo(FleetMode.LOCAL_FALLBACK);
    }
    List<Long> all = run.all();
    for (long w : WINDOWS) {
      assertThat(maxInWindow(all, w, 0, Long.MAX_VALUE))
          .as("seed %d, fleet, window %d ms", seed, w / MS)
          .isLessThanOrEqualTo(ceiling(RATE, BURST, w));
    }
    assertThat((long) all.size())
        .as("seed %d: the local shares still serve about the ceiling", seed)
        .isGreaterThanOrEqualTo((long) (RATE * 2 * 0.9));
  }

  @ParameterizedTest
  @MethodSource("seeds")
  void anOutageMidRunKeepsTheCeilingAndEndsShared(long seed) {
    Run run = run(seed, seed % 2 == 0 ? 0 : Long.MAX_VALUE - 500 * MS, 4_000, 2 * MS, 1_000, 2_500);
    List<Long> all = run.all();
    long slack = (long) INSTANCES * (LEASE + run.limiters[0].settings().lowWaterTokens());
    for (long w : WINDOWS) {
      assertThat(maxInWindow(all, w, 1_000 * MS, 2_500 * MS))
          .as("seed %d, during the outage, window %d ms", seed, w / MS)
          .isLessThanOrEqualTo(ceiling(RATE, BURST, w) + slack);
    }
    assertThat(maxInWindow(all, 1_000 * MS, 1_000 * MS, 2_000 * MS))
        .as("seed %d: the outage's first second still serves about the ceiling", seed)
        .isGreaterThanOrEqualTo((long) (RATE * 0.85));
    for (FleetLimiter l : run.limiters) {
      assertThat(l.mode())
          .as("seed %d: shared again after the outage", seed)
          .isEqualTo(FleetMode.SHARED);
      assertThat(l.stats().sourceErrors()).as("seed %d", seed).isPositive();
    }
  }

  @Test
  void concurrentTakersNeitherLoseNorDuplicateTokens() throws Exception {
    AtomicLong pool = new AtomicLong(200_000);
    AtomicLong given = new AtomicLong();
    LeaseSource src =
        n -> {
          long got;
          while (true) {
            long p = pool.get();
            got = Math.min(n, p);
            if (pool.compareAndSet(p, p - got)) {
              break;
            }
          }
          given.addAndGet(got);
          return CompletableFuture.completedFuture(new Lease((int) got, got < n ? 1 : 0));
        };
    ManualTicker t = new ManualTicker(Long.MAX_VALUE - 5);
    FleetLimiter l =
        new FleetLimiter(
            FleetLimitSettings.of(1e6, 1000, 1, Duration.ofMillis(5), 7),
            src,
            t,
            FleetLimitListener.NONE);
    int threads = 4;
    AtomicLong granted = new AtomicLong();
    CyclicBarrier barrier = new CyclicBarrier(threads);
    List<Thread> ts = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread th =
          new Thread(() -> {
            try {
              barrier.await();
              long mine = 0;
              for (int k = 0; k < 2_000_000 && (pool.get() > 0 || l.stats().held() > 0); k++) {
                if (l.tryAcquire(t.read())) {
                  mine++;
                }
              }
              granted.addAndGet(mine);
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          });
      ts.add(th);
      th.start();
    }
    for (Thread th : ts) {
      th.join();
    }
    assertThat(granted.get() + l.stats().held()).isEqualTo(given.get());
    assertThat(granted.get()).isEqualTo(l.stats().grantedShared());
    assertThat(granted.get()).as("every token of the pool was spent").isEqualTo(200_000);
  }
}
