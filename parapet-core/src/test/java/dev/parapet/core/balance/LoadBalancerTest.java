package dev.parapet.core.balance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.RandomSource;
import org.junit.jupiter.api.Test;

class LoadBalancerTest {

  @Test
  void buildsTheBalancerNamedInConfiguration() {
    HostSet hosts = HostSet.of(TestHealth.hosts(1, 2));
    RandomSource random = RandomSource.seeded(1);
    assertThat(LoadBalancer.of("round_robin", hosts, SlowStart.NONE, random))
        .isInstanceOf(RoundRobinBalancer.class);
    assertThat(LoadBalancer.of("least_request", hosts, SlowStart.NONE, random))
        .isInstanceOf(LeastRequestBalancer.class);
    assertThat(LoadBalancer.of("ring_hash", hosts, SlowStart.NONE, random))
        .isInstanceOf(RingHashBalancer.class);
    assertThat(LoadBalancer.of("ip_hash", hosts, SlowStart.NONE, random))
        .isInstanceOf(IpHashBalancer.class);
    assertThatThrownBy(() -> LoadBalancer.of("random", hosts, SlowStart.NONE, random))
        .hasMessage(
            "balancer : \"random\" (expected: one of round_robin, least_request, ring_hash,"
                + " ip_hash)");
  }

  @Test
  void hostsRejectBadWeightsAndAddresses() {
    assertThatThrownBy(() -> new Host("a:1", 0)).hasMessage("weight : 0 (expected: in [1, 1000])");
    assertThatThrownBy(() -> new Host("", 1)).hasMessage("address : \"\" (expected: not empty)");
  }
}
