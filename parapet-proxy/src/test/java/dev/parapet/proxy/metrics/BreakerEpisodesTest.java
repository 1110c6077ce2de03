package dev.parapet.proxy.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.State;
import dev.parapet.core.time.ManualTicker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * When an episode of stopped traffic starts, goes on and ends, as the open-seconds gauge reads it.
 */
class BreakerEpisodesTest {
  private final ManualTicker ticker =
      new ManualTicker(Long.MAX_VALUE - Duration.ofSeconds(5).toNanos());
  private final BreakerEpisodes episodes = new BreakerEpisodes(ticker);

  private void to(State s) {
    episodes.transition("route:api", s, ticker.read());
  }

  private void advance(long seconds) {
    ticker.advance(Duration.ofSeconds(seconds));
  }

  private double seconds() {
    return episodes.openSeconds("route:api");
  }

  @Test
  void failedProbesContinueTheEpisodeAndRampingEndsIt() {
    assertThat(seconds()).isZero(); // never heard of
    to(State.OPEN);
    advance(30);
    to(State.HALF_OPEN);
    advance(2);
    to(State.OPEN); // a probe failed: still the same episode
    advance(60);
    assertThat(seconds()).isEqualTo(92.0);
    to(State.HALF_OPEN);
    to(State.RAMPING); // traffic flows again
    assertThat(seconds()).isZero();
    advance(10);
    to(State.OPEN); // the ramp tripped: a new episode
    advance(5);
    assertThat(seconds()).isEqualTo(5.0);
    to(State.CLOSED);
    assertThat(seconds()).isZero();
  }

  @Test
  void anOperatorsForcedOpenCountsAndDisablingEndsIt() {
    to(State.FORCED_OPEN);
    advance(400);
    assertThat(seconds()).isEqualTo(400.0);
    to(State.DISABLED);
    assertThat(seconds()).isZero();
  }

  @Test
  void aReplacedBreakerStartsWithoutTheOldEpisode() {
    to(State.OPEN);
    advance(100);
    episodes.started("route:api", State.CLOSED); // a reload built a new one
    advance(100);
    assertThat(seconds()).isZero();
    assertThat(episodes.openSeconds("route:other")).isZero();
  }
}
