package dev.parapet.core.balance;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RoundRobinBalancerTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void interleavesLikeNginx() {
    // nginx's documented example: weights 5, 1, 1 give a a b a c a a.
    List<Host> hosts = TestHealth.hosts(5, 1, 1);
    RoundRobinBalancer b = new RoundRobinBalancer(HostSet.of(hosts), SlowStart.NONE);
    StringBuilder seq = new StringBuilder();
    for (int i = 0; i < 14; i++) {
      seq.append((char) ('a' + hosts.indexOf(b.pick(0L, 0L))));
    }
    assertThat(seq.toString()).isEqualTo("aabacaaaabacaa");
  }

  @Test
  void everyFullCycleIsExactlyProportionalToWeights() {
    for (long seed = 1; seed <= 100; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      int n = 1 + r.nextInt(20);
      int[] weights = new int[n];
      for (int i = 0; i < n; i++) {
        weights[i] = 1 + r.nextInt(r.nextBoolean() ? 5 : 100);
      }
      List<Host> hosts = TestHealth.hosts(weights);
      TestHealth health = new TestHealth(n);
      int ejected = n > 1 && r.nextBoolean() ? r.nextInt(n) : -1;
      if (ejected >= 0) {
        health.eject(ejected);
      }
      RoundRobinBalancer b = new RoundRobinBalancer(HostSet.of(hosts, health), SlowStart.NONE);
      int total = 0;
      for (int i = 0; i < n; i++) {
        total += i == ejected ? 0 : weights[i];
      }
      for (int cycle = 0; cycle < 3; cycle++) {
        int[] counts = new int[n];
        for (int k = 0; k < total; k++) {
          counts[hosts.indexOf(b.pick(0L, 0L))]++;
        }
        for (int i = 0; i < n; i++) {
          assertThat(counts[i])
              .as("seed %d cycle %d host %d", seed, cycle, i)
              .isEqualTo(i == ejected ? 0 : weights[i]);
        }
      }
    }
  }

  @Test
  void theSlowPathIsProportionalToo() {
    // Weights summing past the schedule cap force nginx's locked O(n) loop for every pick.
    int n = 40;
    int[] weights = new int[n];
    int total = 0;
    for (int i = 0; i < n; i++) {
      weights[i] = 1000 - i;
      total += weights[i];
    }
    assertThat(total).isGreaterThan(RoundRobinBalancer.MAX_SCHEDULE);
    List<Host> hosts = TestHealth.hosts(weights);
    RoundRobinBalancer b = new RoundRobinBalancer(HostSet.of(hosts), SlowStart.NONE);
    int[] counts = new int[n];
    for (int k = 0; k < total; k++) {
      counts[hosts.indexOf(b.pick(0L, 0L))]++;
    }
    assertThat(counts).containsExactly(weights);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, Long.MAX_VALUE - 10 * SECOND})
  void aReturningHostRampsUpOverTheSlowStartWindow(long start) {
    List<Host> hosts = TestHealth.hosts(1, 1);
    TestHealth health = new TestHealth(2);
    RoundRobinBalancer b =
        new RoundRobinBalancer(HostSet.of(hosts, health), SlowStart.of(Duration.ofSeconds(30)));
    health.eject(1);
    for (int i = 0; i < 10; i++) {
      assertThat(b.pick(start, 0L)).isSameAs(hosts.get(0));
    }
    health.returnAt(1, start);
    // Right after return: 10 % of the weight, so about 1 in 11 picks.
    assertThat(share(b, hosts.get(1), start, 1100)).isCloseTo(0.1 / 1.1, within(0.01));
    // Half way: 55 % of the weight.
    assertThat(share(b, hosts.get(1), start + 15 * SECOND, 1550))
        .isCloseTo(0.55 / 1.55, within(0.01));
    // Done: equal shares, served from the schedule again.
    assertThat(share(b, hosts.get(1), start + 30 * SECOND, 1000)).isEqualTo(0.5);
  }

  @Test
  void updateSwapsTheHostList() {
    List<Host> first = TestHealth.hosts(1, 1);
    RoundRobinBalancer b = new RoundRobinBalancer(HostSet.of(first), SlowStart.NONE);
    b.pick(0L, 0L);
    List<Host> second = List.of(new Host("10.9.9.9:80"));
    b.update(HostSet.of(second));
    assertThat(b.pick(0L, 0L)).isSameAs(second.get(0));
    assertThat(b.hosts().hosts()).containsExactlyElementsOf(second);
  }

  @Test
  void returnsNullWhenEveryHostIsEjectedAndNoHosts() {
    TestHealth health = new TestHealth(2);
    health.eject(0);
    health.eject(1);
    assertThat(
            new RoundRobinBalancer(HostSet.of(TestHealth.hosts(1, 2), health), SlowStart.NONE)
                .pick(0L, 0L))
        .isNull();
    assertThat(new RoundRobinBalancer(HostSet.of(List.of()), SlowStart.NONE).pick(0L, 0L)).isNull();
  }

  @Test
  void anEjectionAfterTheScheduleWasBuiltIsHonouredAtOnce() {
    List<Host> hosts = TestHealth.hosts(1, 1, 1);
    TestHealth health = new TestHealth(3);
    RoundRobinBalancer b = new RoundRobinBalancer(HostSet.of(hosts, health), SlowStart.NONE);
    b.pick(0L, 0L);
    health.ejected[2] = true; // without a generation change: a racing reader's view
    for (int i = 0; i < 30; i++) {
      assertThat(b.pick(0L, 0L)).isNotSameAs(hosts.get(2));
    }
  }

  private static double share(RoundRobinBalancer b, Host host, long now, int picks) {
    int hits = 0;
    for (int i = 0; i < picks; i++) {
      hits += b.pick(now, 0L) == host ? 1 : 0;
    }
    return (double) hits / picks;
  }

  private static org.assertj.core.data.Offset<Double> within(double d) {
    return org.assertj.core.data.Offset.offset(d);
  }
}
