package dev.parapet.core.balance;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RingHashBalancerTest {
  private static final long SECOND = 1_000_000_000L;
  private static final int KEYS = 100_000;

  @Test
  void removingOneOfTenHostsMovesAboutATenthOfKeysAndOnlyItsOwn() {
    for (long seed = 1; seed <= 3; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      List<Host> hosts = TestHealth.hosts(1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
      RingHashBalancer b = new RingHashBalancer(HostSet.of(hosts), SlowStart.NONE);
      long[] keys = new long[KEYS];
      Host[] before = new Host[KEYS];
      for (int k = 0; k < KEYS; k++) {
        keys[k] = r.nextLong();
        before[k] = b.pick(0L, keys[k]);
      }
      Host removed = hosts.get(r.nextInt(10));
      List<Host> rest = new ArrayList<>(hosts);
      rest.remove(removed);
      b.update(HostSet.of(rest));
      int moved = 0;
      for (int k = 0; k < KEYS; k++) {
        Host after = b.pick(0L, keys[k]);
        if (after != before[k]) {
          moved++;
          assertThat(before[k])
              .as("seed %d: key %d moved off a host that stayed", seed, k)
              .isSameAs(removed);
        } else {
          assertThat(after).isNotSameAs(removed);
        }
      }
      assertThat((double) moved / KEYS).as("seed %d moved fraction", seed).isBetween(0.07, 0.13);
    }
  }

  @Test
  void addingAHostOnlyTakesKeysForTheNewHost() {
    List<Host> hosts = TestHealth.hosts(1, 1, 1, 1, 1);
    RingHashBalancer b = new RingHashBalancer(HostSet.of(hosts), SlowStart.NONE);
    Host[] before = new Host[KEYS];
    for (int k = 0; k < KEYS; k++) {
      before[k] = b.pick(0L, k);
    }
    List<Host> more = new ArrayList<>(hosts);
    Host added = new Host("10.0.0.99:80");
    more.add(added);
    b.update(HostSet.of(more));
    int moved = 0;
    for (int k = 0; k < KEYS; k++) {
      Host after = b.pick(0L, k);
      if (after != before[k]) {
        moved++;
        assertThat(after).isSameAs(added);
      }
    }
    assertThat((double) moved / KEYS).isBetween(1.0 / 6 - 0.04, 1.0 / 6 + 0.04);
  }

  @Test
  void ejectionMovesOnlyTheEjectedHostsKeysAndTheyComeBack() {
    List<Host> hosts = TestHealth.hosts(1, 1, 1, 1);
    TestHealth health = new TestHealth(4);
    RingHashBalancer b = new RingHashBalancer(HostSet.of(hosts, health), SlowStart.NONE);
    Host[] before = new Host[KEYS];
    for (int k = 0; k < KEYS; k++) {
      before[k] = b.pick(0L, k);
    }
    health.eject(2);
    for (int k = 0; k < KEYS; k++) {
      Host now = b.pick(0L, k);
      assertThat(now).isNotSameAs(hosts.get(2));
      if (before[k] != hosts.get(2)) {
        assertThat(now).isSameAs(before[k]);
      }
    }
    health.ejected[2] = false;
    for (int k = 0; k < KEYS; k++) {
      assertThat(b.pick(0L, k)).isSameAs(before[k]);
    }
  }

  @Test
  void sharesFollowWeights() {
    List<Host> hosts = TestHealth.hosts(1, 2, 3, 4);
    RingHashBalancer b = new RingHashBalancer(HostSet.of(hosts), SlowStart.NONE);
    int[] counts = new int[4];
    for (int k = 0; k < KEYS; k++) {
      counts[hosts.indexOf(b.pick(0L, k))]++;
    }
    for (int i = 0; i < 4; i++) {
      assertThat((double) counts[i] / KEYS).isBetween((i + 1) / 10.0 - 0.03, (i + 1) / 10.0 + 0.03);
    }
  }

  @Test
  void slowStartTakesAGrowingShareOfItsOwnKeysOnly() {
    List<Host> hosts = TestHealth.hosts(1, 1);
    TestHealth health = new TestHealth(2);
    RingHashBalancer b =
        new RingHashBalancer(HostSet.of(hosts, health), SlowStart.of(Duration.ofSeconds(30)));
    Host[] steady = new Host[KEYS];
    for (int k = 0; k < KEYS; k++) {
      steady[k] = b.pick(0L, k);
    }
    long t0 = Long.MAX_VALUE - SECOND; // across the wrap-around
    health.returnAt(1, t0);
    int own = 0;
    int kept = 0;
    for (int k = 0; k < KEYS; k++) {
      Host h = b.pick(t0 + 15 * SECOND, k); // factor 0.55
      if (steady[k] == hosts.get(1)) {
        own++;
        kept += h == hosts.get(1) ? 1 : 0;
      } else {
        assertThat(h).isSameAs(hosts.get(0));
      }
      assertThat(b.pick(t0 + 15 * SECOND, k)).isSameAs(h); // still a function of the key
    }
    assertThat((double) kept / own).isBetween(0.50, 0.60);
    for (int k = 0; k < KEYS; k++) {
      assertThat(b.pick(t0 + 30 * SECOND, k)).isSameAs(steady[k]);
    }
  }

  @Test
  void ringSizeFollowsHostCountAndNullWhenAllEjected() {
    List<Host> hosts = TestHealth.hosts(1, 1, 1);
    TestHealth health = new TestHealth(3);
    RingHashBalancer b = new RingHashBalancer(HostSet.of(hosts, health), SlowStart.NONE);
    assertThat(b.ringSize()).isEqualTo(3 * RingHashBalancer.DEFAULT_POINTS_PER_WEIGHT);
    health.eject(0);
    health.eject(1);
    health.eject(2);
    assertThat(b.pick(0L, 42L)).isNull();
    assertThat(new RingHashBalancer(HostSet.of(List.of()), SlowStart.NONE).pick(0L, 1L)).isNull();
    assertThat(RingHashBalancer.hashKey("/a".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
        .isNotEqualTo(
            RingHashBalancer.hashKey("/b".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
  }
}
