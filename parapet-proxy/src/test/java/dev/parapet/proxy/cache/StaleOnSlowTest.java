package dev.parapet.proxy.cache;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which upstream answers tell {@code stale_on_slow: auto} that the origin behind is sick. */
class StaleOnSlowTest {

  @Test
  void theNextTiersOwnMemberDecides() {
    assertThat(StaleOnSlow.lastMemberIsStale(null)).isFalse();
    assertThat(StaleOnSlow.lastMemberIsStale("shield; fwd=stale; ttl=-3")).isTrue();
    assertThat(
            StaleOnSlow.lastMemberIsStale(
                "origin-cache; hit, shield; fwd=stale; ttl=-1; detail=\"stale slow-origin\""))
        .isTrue();
    // an older tier's stale answer, stored and now a fresh hit of the next tier: not a signal
    assertThat(StaleOnSlow.lastMemberIsStale("far; fwd=stale, shield; hit; ttl=30")).isFalse();
    assertThat(StaleOnSlow.lastMemberIsStale("shield; fwd=miss; detail=\"x, fwd=stale\""))
        .isFalse();
    assertThat(StaleOnSlow.lastMemberIsStale("shield; fwd=stalemate")).isFalse();
  }
}
