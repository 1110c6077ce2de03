package dev.parapet.core.balance;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class IpHashBalancerTest {

  @Test
  void aClientStaysOnItsHost() {
    List<Host> hosts = TestHealth.hosts(1, 1, 1, 1);
    IpHashBalancer b = new IpHashBalancer(HostSet.of(hosts), SlowStart.NONE);
    byte[] v4 = {(byte) 192, (byte) 168, 1, 7};
    byte[] v6 = new byte[16];
    v6[0] = 0x20;
    v6[15] = 9;
    assertThat(b.pick(0L, v4)).isSameAs(b.pick(5L, v4.clone()));
    assertThat(b.pick(0L, v6)).isSameAs(b.pick(0L, IpHashBalancer.hashAddress(v6)));
  }

  @Test
  void clientsSpreadByWeightAcrossAddressesOfOneSubnet() {
    List<Host> hosts = TestHealth.hosts(1, 3);
    IpHashBalancer b = new IpHashBalancer(HostSet.of(hosts), SlowStart.NONE);
    int[] counts = new int[2];
    for (int i = 0; i < 40_000; i++) {
      byte[] a = {10, 1, (byte) (i >>> 8), (byte) i};
      counts[hosts.indexOf(b.pick(0L, a))]++;
    }
    assertThat(counts[1] / 40_000.0).isBetween(0.72, 0.78);
  }

  @Test
  void onlyClientsOfAnEjectedHostMoveAndNeverToAnEjectedHost() {
    for (long seed = 1; seed <= 20; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      int n = 2 + r.nextInt(10);
      List<Host> hosts = TestHealth.equalHosts(n);
      TestHealth health = new TestHealth(n);
      IpHashBalancer b = new IpHashBalancer(HostSet.of(hosts, health), SlowStart.NONE);
      long[] keys = new long[2000];
      Host[] before = new Host[keys.length];
      for (int k = 0; k < keys.length; k++) {
        keys[k] = IpHashBalancer.hashAddress(new byte[] {10, 0, (byte) r.nextInt(256), (byte) k});
        before[k] = b.pick(0L, keys[k]);
      }
      int ejected = 0;
      for (int i = 0; i < n - 1; i++) {
        if (r.nextInt(3) == 0) {
          health.eject(i);
          ejected++;
        }
      }
      for (int k = 0; k < keys.length; k++) {
        Host h = b.pick(0L, keys[k]);
        assertThat(h).as("seed %d", seed).isNotNull();
        assertThat(health.ejected[hosts.indexOf(h)]).as("seed %d", seed).isFalse();
        if (!health.ejected[hosts.indexOf(before[k])]) {
          assertThat(h).as("seed %d key %d (ejected %d)", seed, k, ejected).isSameAs(before[k]);
        }
      }
    }
  }

  @Test
  void nullWhenEveryHostIsEjected() {
    TestHealth health = new TestHealth(2);
    health.eject(0);
    health.eject(1);
    IpHashBalancer b =
        new IpHashBalancer(HostSet.of(TestHealth.hosts(1, 1), health), SlowStart.NONE);
    assertThat(b.pick(0L, new byte[] {1, 2, 3, 4})).isNull();
  }
}
