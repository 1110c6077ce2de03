package dev.parapet.core.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class UpstreamCapacityTest {
  private static final long MS = 1_000_000L;
  private final UpstreamCapacity cap =
      new UpstreamCapacity(Duration.ofSeconds(2), Duration.ofSeconds(30));

  @Test
  void readsTheStateAndTheShare() {
    assertThat(UpstreamCapacity.parse("degraded; q=0.12")).isEqualTo(0.12);
    assertThat(UpstreamCapacity.parse("Degraded;q=0.5;limit=4")).isEqualTo(0.5);
    assertThat(UpstreamCapacity.parse("degraded; limit=2; inflight=2; queued=0; level=none"))
        .isZero();
    assertThat(UpstreamCapacity.parse("shed; reason=concurrency; retry=2000ms")).isZero();
    assertThat(UpstreamCapacity.parse("degraded; q=7")).isEqualTo(1.0);
    assertThat(UpstreamCapacity.parse("degraded; q=-1")).isZero();
    assertThat(UpstreamCapacity.parse("degraded; q=lots")).isZero();
    assertThat(UpstreamCapacity.parse("ok; q=0.5")).isEqualTo(-1);
    assertThat(UpstreamCapacity.parse("")).isEqualTo(-1);
    assertThat(UpstreamCapacity.parse(null)).isEqualTo(-1);
  }

  @Test
  void nothingIsHeldBackUntilTheTierSaysSo() {
    for (int i = 0; i < 100; i++) {
      cap.requestStarted(i * MS);
      assertThat(cap.tryExtra(i * MS)).isTrue();
    }
    assertThat(cap.refused()).isZero();
  }

  @Test
  void aShedRefusesEveryExtraAttemptUntilTheHoldEnds() {
    cap.signal(0, RetryAfter.ABSENT, 0);

    for (int i = 0; i < 50; i++) {
      cap.requestStarted(i * 10 * MS);
      assertThat(cap.tryExtra(i * 10 * MS)).isFalse();
    }
    assertThat(cap.isDegraded(1999 * MS)).isTrue();
    assertThat(cap.isDegraded(2000 * MS)).isFalse();
    assertThat(cap.tryExtra(2000 * MS)).isTrue();
    assertThat(cap.refused()).isEqualTo(50);
  }

  @Test
  void retryAfterSetsTheHoldWithinItsCap() {
    cap.signal(0, 5_000 * MS, 0);
    assertThat(cap.isDegraded(4_999 * MS)).isTrue();
    assertThat(cap.isDegraded(5_000 * MS)).isFalse();

    cap.signal(0, 3_600_000 * MS, 10_000 * MS); // an hour asked, 30 s granted
    assertThat(cap.isDegraded(39_999 * MS)).isTrue();
    assertThat(cap.isDegraded(40_000 * MS)).isFalse();
  }

  @Test
  void aLaterSignalExtendsButNeverShortensTheHold() {
    cap.signal(0, 10_000 * MS, 0);
    cap.signal(0, RetryAfter.ABSENT, 1_000 * MS); // 2 s from 1 s ends before 10 s
    assertThat(cap.isDegraded(9_999 * MS)).isTrue();
    assertThat(cap.signals()).isEqualTo(2);
  }

  /** Seeded sequences: extra attempts granted while degraded never exceed q per request started. */
  @Test
  void extraLoadStaysWithinTheShareForAnySequence() {
    for (long seed = 1; seed <= 200; seed++) {
      RandomSource random = RandomSource.seeded(seed);
      double q = random.nextDouble();
      UpstreamCapacity c = new UpstreamCapacity(Duration.ofSeconds(2), Duration.ofSeconds(30));
      c.signal(q, RetryAfter.ABSENT, 0);
      int started = 0;
      int granted = 0;
      for (int i = 0; i < 500; i++) {
        long now = i * MS; // within the hold
        if (random.nextDouble() < 0.5) {
          c.requestStarted(now);
          started++;
        } else if (c.tryExtra(now)) {
          granted++;
        }
      }
      assertThat((double) granted).as("seed %d, q %.3f", seed, q).isLessThanOrEqualTo(q * started);
    }
  }

  @Test
  void aShareLetsThatFractionOfRequestsMakeAnExtraAttempt() {
    cap.signal(0.25, RetryAfter.ABSENT, 0);
    int granted = 0;
    for (int i = 0; i < 100; i++) {
      cap.requestStarted(i * MS);
      if (cap.tryExtra(i * MS)) {
        granted++;
      }
    }
    assertThat(granted).isEqualTo(25);
  }

  @Test
  void aNewEpisodeStartsWithoutCredit() {
    cap.signal(1.0, RetryAfter.ABSENT, 0);
    for (int i = 0; i < 3; i++) {
      cap.requestStarted(i * MS);
    }
    cap.signal(0, RetryAfter.ABSENT, 5_000 * MS); // the first hold ended at 2 s
    assertThat(cap.tryExtra(5_000 * MS)).isFalse();
  }

  @Test
  void aHoldShorterThanItsCapIsRequired() {
    assertThatThrownBy(() -> new UpstreamCapacity(Duration.ofSeconds(5), Duration.ofSeconds(1)))
        .hasMessageContaining("maxHold");
  }
}
