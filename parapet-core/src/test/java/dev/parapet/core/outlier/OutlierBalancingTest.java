package dev.parapet.core.outlier;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.balance.Host;
import dev.parapet.core.balance.HostSet;
import dev.parapet.core.balance.LeastRequestBalancer;
import dev.parapet.core.balance.LoadBalancer;
import dev.parapet.core.balance.RingHashBalancer;
import dev.parapet.core.balance.RoundRobinBalancer;
import dev.parapet.core.balance.SlowStart;
import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import java.util.List;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The detector as the balancers' {@code HostHealth}: one body over every balancer. */
class OutlierBalancingTest {

  static Stream<BiFunction<HostSet, SlowStart, LoadBalancer>> balancers() {
    return Stream.of(
        RoundRobinBalancer::new,
        (h, s) -> new LeastRequestBalancer(h, s, RandomSource.seeded(9)),
        RingHashBalancer::new);
  }

  @ParameterizedTest
  @MethodSource("balancers")
  void anEjectedHostGetsNothingThenSlowStartsAfterItsReturn(
      BiFunction<HostSet, SlowStart, LoadBalancer> factory) {
    ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - Duration.ofSeconds(20).toNanos());
    List<Host> hosts = List.of(new Host("a:1"), new Host("b:1"), new Host("c:1"), new Host("d:1"));
    OutlierDetector detector =
        new OutlierDetector(4, OutlierConfig.defaults(), OutlierListener.NONE, ticker.read());
    LoadBalancer b =
        factory.apply(HostSet.of(hosts, detector), SlowStart.of(Duration.ofSeconds(30)));
    for (int i = 0; i < 5; i++) {
      detector.recordStatus(2, 503, ticker.read());
    }
    for (int k = 0; k < 4000; k++) {
      assertThat(b.pick(ticker.read(), k)).isNotSameAs(hosts.get(2));
    }
    ticker.advance(Duration.ofSeconds(30));
    detector.advance(ticker.read());
    int justBack = count(b, hosts.get(2), ticker.read());
    ticker.advance(Duration.ofSeconds(30));
    int later = count(b, hosts.get(2), ticker.read());
    assertThat(justBack).isBetween(1, 4000 / 4 / 5);
    assertThat(later).isBetween(4000 / 4 * 3 / 4, 4000 / 4 * 5 / 4);
  }

  /** 4000 picks whose requests stay in flight until all are made (least request needs load). */
  private static int count(LoadBalancer b, Host host, long now) {
    int hits = 0;
    for (int k = 0; k < 4000; k++) {
      Host picked = b.pick(now, k);
      picked.requestStarted();
      hits += picked == host ? 1 : 0;
    }
    for (Host h : b.hosts().hosts()) {
      while (h.activeRequests() > 0) {
        h.requestFinished();
      }
    }
    return hits;
  }
}
