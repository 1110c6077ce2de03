package dev.parapet.proxy.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.outlier.OutlierConfig;
import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.RandomSource;
import dev.parapet.proxy.config.OriginConfig;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Host choice and outcome mapping of one pool, without sockets (nothing is connected). */
class OriginPoolTest {
  private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - 1_000_000_000L);

  private OriginPool pool(String balancer, int hosts, OutlierConfig outlier) {
    List<InetSocketAddress> addresses = new ArrayList<>();
    for (int i = 0; i < hosts; i++) {
      addresses.add(new InetSocketAddress("127.0.0.1", 20_000 + i));
    }
    HostSelection selection = new HostSelection(balancer, outlier, null, Duration.ofSeconds(30));
    return new OriginPool(
        OriginSettings.defaults("api", addresses).withSelection(selection),
        NioSocketChannel.class,
        ticker,
        RandomSource.seeded(42));
  }

  private static long key(OriginPool p, int i) {
    return p.hashKey("/k/" + i, "10.0.0." + (i % 250));
  }

  private void fail(OriginPool p, HostPool h, int times) {
    for (int i = 0; i < times; i++) {
      p.onAttemptOutcome(h, Outcome.FAILURE_STATUS, 1_000_000L, ticker.read());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"round_robin", "least_request", "ring_hash", "ip_hash"})
  void aRetryPrefersAnotherHost(String balancer) {
    OriginPool p = pool(balancer, 3, OutlierConfig.defaults());
    for (int i = 0; i < 200; i++) {
      long k = key(p, i);
      HostPool first = p.pick(k);
      assertThat(p.pick(k, first)).isNotSameAs(first);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"round_robin", "least_request", "ring_hash", "ip_hash"})
  void anEjectedHostGetsNoPicksAndIgnoredOutcomesEjectNobody(String balancer) {
    OriginPool p = pool(balancer, 3, OutlierConfig.defaults().withConsecutive5xx(5));
    HostPool sick = p.hosts().get(1);
    for (int i = 0; i < 20; i++) {
      p.onAttemptOutcome(sick, Outcome.CLIENT_CANCELLED, -1, ticker.read());
      p.onAttemptOutcome(sick, Outcome.LOCAL_REJECTION, -1, ticker.read());
    }
    assertThat(p.ejectedHosts()).isZero();
    fail(p, sick, 4);
    p.onAttemptOutcome(sick, Outcome.SUCCESS, 1_000_000L, ticker.read()); // the run restarts
    fail(p, sick, 4);
    assertThat(p.ejectedHosts()).isZero();
    fail(p, sick, 1);
    assertThat(p.ejectedHosts()).isEqualTo(1);
    for (int i = 0; i < 300; i++) {
      assertThat(p.pick(key(p, i))).isNotSameAs(sick);
    }
    assertThat(p.status(ticker.read()).get(1).ejected()).isTrue();
    assertThat(p.status(ticker.read()).get(1).ejections()).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"round_robin", "least_request", "ring_hash", "ip_hash"})
  void everyHostOutStillPicksAHost(String balancer) {
    OriginPool p =
        pool(balancer, 2, OutlierConfig.defaults().withConsecutive5xx(1).withMaxEjectedFraction(1));
    fail(p, p.hosts().get(0), 1);
    p.onAttemptOutcome(p.hosts().get(1), Outcome.CONNECT_FAILURE, -1, ticker.read());
    assertThat(p.ejectedHosts()).isEqualTo(2);
    Set<HostPool> seen = new HashSet<>();
    for (int i = 0; i < 10; i++) {
      seen.add(p.pick(key(p, i)));
    }
    assertThat(seen).hasSize(2); // in turn, not all on one
    assertThat(p.panicPicks()).isEqualTo(10);
  }

  @ParameterizedTest
  @ValueSource(strings = {"round_robin", "least_request", "ring_hash", "ip_hash"})
  void shardsExistOnlyForRingHash(String balancer) {
    OriginPool p = pool(balancer, 4, OutlierConfig.defaults());
    Set<Integer> shards = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      shards.add(p.shardOf(key(p, i)));
    }
    if (balancer.equals("ring_hash")) {
      assertThat(p.shardCount()).isEqualTo(4);
      assertThat(shards).containsExactlyInAnyOrder(0, 1, 2, 3);
    } else {
      assertThat(p.shardCount()).isEqualTo(1);
      assertThat(shards).containsExactly(0);
    }
  }

  @org.junit.jupiter.api.Test
  void aShardStaysPutWhileItsOwnerIsEjected() {
    OriginPool p = pool("ring_hash", 4, OutlierConfig.defaults().withConsecutive5xx(1));
    long k = p.hashKey("/objects/42", null);
    HostPool owner = p.pick(k);
    int shard = p.shardOf(k);
    assertThat(shard).isEqualTo(owner.index());
    fail(p, owner, 1);
    assertThat(p.pick(k)).isNotSameAs(owner);
    assertThat(p.shardOf(k)).isEqualTo(shard);
  }

  @org.junit.jupiter.api.Test
  void outcomesOfAHostFromAnotherPoolAreIgnored() {
    OriginPool p = pool("round_robin", 2, OutlierConfig.defaults().withConsecutive5xx(1));
    OriginPool replaced = pool("round_robin", 2, OutlierConfig.defaults().withConsecutive5xx(1));
    fail(p, replaced.hosts().get(0), 3);
    assertThat(p.ejectedHosts()).isZero();
  }

  private OriginPool weighted(String balancer, List<Integer> weights, OriginConfig.HashKey key) {
    List<InetSocketAddress> addresses = new ArrayList<>();
    for (int i = 0; i < weights.size(); i++) {
      addresses.add(new InetSocketAddress("127.0.0.1", 20_000 + i));
    }
    HostSelection selection =
        new HostSelection(balancer, OutlierConfig.defaults(), null, Duration.ZERO)
            .withWeights(weights, key);
    return new OriginPool(
        OriginSettings.defaults("api", addresses).withSelection(selection),
        NioSocketChannel.class,
        ticker,
        RandomSource.seeded(42));
  }

  @Test
  void weightedRoundRobinFollowsTheConfiguredWeights() {
    OriginPool p = weighted("round_robin", List.of(3, 1), OriginConfig.HashKey.PATH);
    int[] picks = new int[2];
    for (int i = 0; i < 400; i++) {
      picks[p.pick().index()]++;
    }
    assertThat(picks).containsExactly(300, 100);
    // Without weights the same pool alternates.
    OriginPool even = weighted("round_robin", List.of(1, 1), OriginConfig.HashKey.PATH);
    int[] evenPicks = new int[2];
    for (int i = 0; i < 400; i++) {
      evenPicks[even.pick().index()]++;
    }
    assertThat(evenPicks).containsExactly(200, 200);
  }

  @Test
  void ringHashKeysOnTheConfiguredHeaderOrCookieElseThePath() {
    OriginPool byHeader =
        weighted(
            "ring_hash",
            List.of(1, 1, 1, 1),
            new OriginConfig.HashKey(OriginConfig.HashKey.Source.HEADER, "X-User"));
    OriginPool byCookie =
        weighted(
            "ring_hash",
            List.of(1, 1, 1, 1),
            new OriginConfig.HashKey(OriginConfig.HashKey.Source.COOKIE, "session"));
    Set<Integer> hostsOfOneUser = new HashSet<>();
    Set<Integer> hostsOfOneSession = new HashSet<>();
    Set<Integer> hostsByPath = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      String path = "/objects/" + i;
      HttpHeaders h = new DefaultHttpHeaders().set("X-User", "alice");
      hostsOfOneUser.add(byHeader.pick(byHeader.hashKey(path, null, h)).index());
      HttpHeaders c = new DefaultHttpHeaders().add("Cookie", "a=1; session=s-42; b=2");
      hostsOfOneSession.add(byCookie.pick(byCookie.hashKey(path, null, c)).index());
      // No such header: the path is hashed, as with hash_key: path.
      long fallback = byHeader.hashKey(path, null, new DefaultHttpHeaders());
      assertThat(fallback).isEqualTo(byHeader.hashKey(path, null));
      hostsByPath.add(byHeader.pick(fallback).index());
    }
    assertThat(hostsOfOneUser).hasSize(1);
    assertThat(hostsOfOneSession).hasSize(1);
    assertThat(hostsByPath).hasSizeGreaterThan(1);
  }
}
