package dev.parapet.core.balance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LeastRequestBalancerTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void neverPicksAnEjectedHost() {
    for (long seed = 1; seed <= 200; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      int n = 1 + r.nextInt(30);
      List<Host> hosts = TestHealth.equalHosts(n);
      TestHealth health = new TestHealth(n);
      LeastRequestBalancer b =
          new LeastRequestBalancer(
              HostSet.of(hosts, health), SlowStart.NONE, RandomSource.seeded(seed));
      for (int step = 0; step < 500; step++) {
        int h = r.nextInt(n);
        if (r.nextInt(4) == 0) {
          health.ejected[h] = !health.ejected[h];
        }
        Host picked = b.pick(0L, 0L);
        boolean anyAvailable = false;
        for (boolean e : health.ejected) {
          anyAvailable |= !e;
        }
        if (!anyAvailable) {
          assertThat(picked).as("seed %d step %d", seed, step).isNull();
          continue;
        }
        assertThat(picked).as("seed %d step %d", seed, step).isNotNull();
        assertThat(health.ejected[hosts.indexOf(picked)])
            .as("seed %d step %d picked an ejected host", seed, step)
            .isFalse();
        if (r.nextBoolean()) {
          picked.requestStarted();
        } else {
          hosts.get(r.nextInt(n)).requestFinished();
        }
      }
    }
  }

  @Test
  void ofTwoCandidatesTheLessLoadedWins() {
    List<Host> hosts = TestHealth.hosts(1, 1);
    for (int i = 0; i < 5; i++) {
      hosts.get(0).requestStarted();
    }
    LeastRequestBalancer b =
        new LeastRequestBalancer(HostSet.of(hosts), SlowStart.NONE, RandomSource.seeded(3));
    for (int i = 0; i < 100; i++) {
      assertThat(b.pick(0L, 0L)).isSameAs(hosts.get(1));
    }
  }

  @Test
  void loadSpreadsEvenlyAndAvoidsTheBusyHost() {
    List<Host> hosts = TestHealth.equalHosts(10);
    hosts.forEach(h -> {});
    for (int i = 0; i < 50; i++) {
      hosts.get(0).requestStarted(); // a host stuck on slow requests
    }
    LeastRequestBalancer b =
        new LeastRequestBalancer(HostSet.of(hosts), SlowStart.NONE, RandomSource.seeded(11));
    int[] counts = new int[10];
    for (int i = 0; i < 10_000; i++) {
      Host h = b.pick(0L, 0L);
      counts[hosts.indexOf(h)]++;
      h.requestStarted();
      hosts.get(1 + (i % 9)).requestFinished();
    }
    assertThat(counts[0]).isLessThan(100);
    for (int i = 1; i < 10; i++) {
      assertThat(counts[i]).isBetween(800, 1400);
    }
  }

  @Test
  void weightsAndSlowStartScaleTheLoadPerHost() {
    List<Host> hosts = TestHealth.hosts(3, 1);
    hosts.get(0).requestStarted();
    hosts.get(0).requestStarted();
    // (2+1)/3 = 1 vs (0+1)/1 = 1: a tie goes to the first candidate, so both get picked.
    LeastRequestBalancer b =
        new LeastRequestBalancer(HostSet.of(hosts), SlowStart.NONE, RandomSource.seeded(5));
    int heavy = 0;
    for (int i = 0; i < 100; i++) {
      heavy += b.pick(0L, 0L) == hosts.get(0) ? 1 : 0;
    }
    assertThat(heavy).isBetween(20, 80);
    // The weight-3 host just returned: its effective weight is 0.3, so the idle host wins.
    TestHealth health = new TestHealth(2);
    health.returnAt(0, 7 * SECOND);
    LeastRequestBalancer slow =
        new LeastRequestBalancer(
            HostSet.of(hosts, health),
            SlowStart.of(Duration.ofSeconds(30)),
            RandomSource.seeded(5));
    for (int i = 0; i < 100; i++) {
      assertThat(slow.pick(7 * SECOND, 0L)).isSameAs(hosts.get(1));
    }
  }

  @Test
  void requestFinishedNeverGoesBelowZero() {
    Host h = new Host("a:1");
    h.requestFinished();
    h.requestStarted();
    h.requestFinished();
    h.requestFinished();
    assertThat(h.activeRequests()).isZero();
  }
}
