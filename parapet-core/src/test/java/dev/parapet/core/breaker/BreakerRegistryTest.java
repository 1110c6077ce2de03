package dev.parapet.core.breaker;

import static dev.parapet.core.breaker.Harness.S;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BreakerRegistryTest {
  private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - 100 * S);

  private BreakerRegistry registry(int max) {
    return new BreakerRegistry(
        max,
        Duration.ofMinutes(1),
        key ->
            new CircuitBreaker(
                key,
                BreakerPolicy.defaults(),
                RandomSource.seeded(key.hashCode()),
                BreakerListener.NONE,
                ticker.read()));
  }

  private static void trip(CircuitBreaker b, long now) {
    for (int i = 0; i < 3; i++) {
      Permit p = new Permit();
      b.tryAcquire(p, now);
      p.onOutcome(Outcome.CONNECT_FAILURE, now);
    }
  }

  @Test
  void sameKeySameBreaker() {
    BreakerRegistry r = registry(10);
    BreakerKey k = BreakerKey.of(Scope.HOST, "api/127.0.0.1:9001");
    assertThat(r.get(k, ticker.read())).isSameAs(r.get(k, ticker.read()));
    assertThat(r.find(k)).isNotNull();
    assertThat(r.find(BreakerKey.of(Scope.HOST, "other"))).isNull();
    assertThat(r.size()).isEqualTo(1);
    assertThat(r.all()).hasSize(1);
  }

  @Test
  void evictsOnlyIdleClosedBreakersAndNeverOpenOnes() {
    BreakerRegistry r = registry(3);
    CircuitBreaker sick = r.get(BreakerKey.of(Scope.ROUTE, "/api/"), ticker.read());
    CircuitBreaker idle = r.get(BreakerKey.of(Scope.ROUTE, "/static/"), ticker.read());
    CircuitBreaker busy = r.get(BreakerKey.of(Scope.ROUTE, "/img/"), ticker.read());
    trip(sick, ticker.read());
    ticker.advance(10 * 60 * S); // wraps past Long.MAX_VALUE
    busy.tryAcquire(ticker.read()).onOutcome(Outcome.SUCCESS, ticker.read());

    CircuitBreaker fresh = r.get(BreakerKey.of(Scope.ROUTE, "/new/"), ticker.read());
    assertThat(r.evictionCount()).isEqualTo(1);
    assertThat(r.find(idle.key())).isNull();
    assertThat(r.find(sick.key())).isSameAs(sick); // OPEN: never forgotten
    assertThat(r.find(busy.key())).isSameAs(busy); // recently used
    assertThat(r.find(fresh.key())).isSameAs(fresh);
    assertThat(r.size()).isEqualTo(3);
  }

  @Test
  void whenNothingCanBeEvictedTheScopeSharesAnOverflowBreaker() {
    BreakerRegistry r = registry(2);
    trip(r.get(BreakerKey.of(Scope.SHARD, "0"), ticker.read()), ticker.read());
    trip(r.get(BreakerKey.of(Scope.SHARD, "1"), ticker.read()), ticker.read());
    ticker.advance(10 * 60 * S);
    CircuitBreaker a = r.get(BreakerKey.of(Scope.SHARD, "2"), ticker.read());
    CircuitBreaker b = r.get(BreakerKey.of(Scope.SHARD, "3"), ticker.read());
    assertThat(a).isSameAs(b);
    assertThat(a.key()).isEqualTo(BreakerKey.of(Scope.SHARD, "overflow"));
    assertThat(r.overflowCount()).isEqualTo(2);
    assertThat(r.size()).isEqualTo(2);
    assertThat(r.overflowBreakers()).containsExactly(a);
    assertThat(r.remove(BreakerKey.of(Scope.SHARD, "0"))).isNotNull();
    assertThat(r.get(BreakerKey.of(Scope.SHARD, "4"), ticker.read()).key().name()).isEqualTo("4");
  }

  @Test
  void badArgumentsSayWhatWasExpected() {
    assertThatThrownBy(() -> new BreakerRegistry(0, Duration.ofMinutes(1), k -> null))
        .hasMessage("max_breakers : 0 (expected: >= 1)");
    assertThatThrownBy(() -> BreakerKey.of(Scope.ORIGIN, ""))
        .hasMessage("name : \"\" (expected: a non-empty name)");
    assertThat(BreakerKey.of(Scope.ORIGIN, "api").toString()).isEqualTo("origin:api");
  }
}
