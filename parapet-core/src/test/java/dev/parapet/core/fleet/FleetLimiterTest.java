package dev.parapet.core.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The limiter against a fake shared bucket in virtual time: slow, failing, recovering. */
class FleetLimiterTest {
  private static final long MS = 1_000_000L;

  /** Start times: zero, and just below the wrap-around of a nanosecond reading. */
  private static final long NEAR_WRAP = Long.MAX_VALUE - 50 * MS;

  private final List<String> changes = new ArrayList<>();

  private FleetLimiter limiter(ManualTicker t, LeaseSource source, int lease) {
    FleetLimitSettings s = FleetLimitSettings.of(300, 30, 3, Duration.ofMillis(5), lease);
    return new FleetLimiter(
        s, source, t, (from, to, reason, now) -> changes.add(from + "->" + to + ": " + reason));
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void grantsFromLeasesAndAsksForTheNextOneAtLowWater(long start) {
    ManualTicker t = new ManualTicker(start);
    FakeLeaseSource src = new FakeLeaseSource(t, 300, 30);
    FleetLimiter l = limiter(t, src, 5);
    l.tick(t.read());
    assertThat(src.asked).isEqualTo(1);
    assertThat(l.tryAcquire(t.read())).as("no lease back yet: refused, never waited for").isFalse();
    src.advance(MS);
    int granted = 0;
    for (int i = 0; i < 5; i++) {
      granted += l.tryAcquire(t.read()) ? 1 : 0;
    }
    assertThat(granted).isEqualTo(5);
    assertThat(src.asked).as("asked again below the low-water mark").isEqualTo(2);
    assertThat(l.mode()).isEqualTo(FleetMode.SHARED);
    assertThat(changes).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void aSlowSourceFallsBackToTheLocalShareAndALateAnswerDoesNotBringItBack(long start) {
    ManualTicker t = new ManualTicker(start);
    FakeLeaseSource src = new FakeLeaseSource(t, 300, 30);
    src.latencyNanos = 20 * MS;
    FleetLimiter l = limiter(t, src, 5);
    l.tick(t.read());
    t.advance(6 * MS);
    // Local share: 100/s with a burst of 10: ten at once, then one per 10 ms.
    int granted = 0;
    for (int i = 0; i < 50; i++) {
      granted += l.tryAcquire(t.read()) ? 1 : 0;
    }
    assertThat(l.mode()).isEqualTo(FleetMode.LOCAL_FALLBACK);
    assertThat(granted).isEqualTo(10);
    assertThat(changes).hasSize(1);
    assertThat(changes.get(0)).contains("SHARED->LOCAL_FALLBACK: lease not back within 5.0ms");
    src.advance(20 * MS); // the late lease lands
    assertThat(l.mode()).as("late answers keep it local").isEqualTo(FleetMode.LOCAL_FALLBACK);
    assertThat(l.stats().sourceTimeouts()).isEqualTo(1);
    src.latencyNanos = MS; // the source recovers
    src.advance(100 * MS);
    l.tick(t.read()); // a probe
    src.advance(2 * MS);
    assertThat(l.mode()).isEqualTo(FleetMode.SHARED);
    assertThat(changes).hasSize(2);
    assertThat(changes.get(1)).startsWith("LOCAL_FALLBACK->SHARED: lease back in 1.0ms");
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void aFailingSourceFallsBackAtOnceAndComesBackWhenItAnswers(long start) {
    ManualTicker t = new ManualTicker(start);
    FakeLeaseSource src = new FakeLeaseSource(t, 300, 30);
    src.failing = true;
    src.latencyNanos = 0;
    FleetLimiter l = limiter(t, src, 5);
    l.tick(t.read());
    src.advance(0);
    assertThat(l.mode()).isEqualTo(FleetMode.LOCAL_FALLBACK);
    assertThat(changes.get(0)).contains("lease failed: connection refused");
    assertThat(l.tryAcquire(t.read())).as("the local share answers").isTrue();
    int askedWhileDown = src.asked;
    for (int i = 0; i < 99; i++) {
      src.advance(MS);
      l.tryAcquire(t.read());
    }
    assertThat(src.asked - askedWhileDown)
        .as("asked once per probe interval, not per request")
        .isLessThanOrEqualTo(1);
    src.failing = false;
    for (int i = 0; i < 110 && l.mode() != FleetMode.SHARED; i++) {
      src.advance(MS);
      l.tick(t.read());
    }
    assertThat(l.mode()).isEqualTo(FleetMode.SHARED);
    assertThat(l.stats().sourceErrors()).isGreaterThanOrEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void anEmptySharedBucketRefusesWithoutAskingOnEveryRequest(long start) {
    ManualTicker t = new ManualTicker(start);
    FakeLeaseSource src = new FakeLeaseSource(t, 300, 30);
    src.latencyNanos = 0;
    FleetLimiter l = limiter(t, src, 10);
    l.tick(t.read());
    src.advance(0);
    int granted = 0;
    for (int i = 0; i < 100; i++) {
      granted += l.tryAcquire(t.read()) ? 1 : 0;
      src.advance(0);
    }
    assertThat(granted).as("the burst, no more").isEqualTo(30);
    assertThat(l.mode())
        .as("an empty bucket is an answer, not a failure")
        .isEqualTo(FleetMode.SHARED);
    assertThat(src.asked).as("asked again only after the bucket's wait").isLessThanOrEqualTo(5);
    assertThat(l.retryAfterNanos(t.read())).isPositive();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void leasedTokensUnusedForALeaseLifetimeAreDropped(long start) {
    ManualTicker t = new ManualTicker(start);
    CompletableFuture<Lease> first = CompletableFuture.completedFuture(new Lease(5, 0));
    int[] asked = {0};
    LeaseSource src =
        n -> {
          asked[0]++;
          return asked[0] == 1 ? first : new CompletableFuture<>();
        };
    FleetLimiter l = limiter(t, src, 5);
    l.tick(t.read());
    assertThat(l.stats().held()).isEqualTo(5);
    t.advance(Duration.ofSeconds(1));
    assertThat(l.tryAcquire(t.read())).isFalse();
    assertThat(l.stats().held()).isZero();
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void aSourceThatNeverAnswersIsAskedAgainAfterAbandoningTheLease(long start) {
    ManualTicker t = new ManualTicker(start);
    int[] asked = {0};
    FleetLimiter l =
        limiter(
            t,
            n -> {
              asked[0]++;
              return new CompletableFuture<>();
            },
            5);
    l.tick(t.read());
    t.advance(Duration.ofMillis(999));
    l.tick(t.read());
    assertThat(asked[0]).isEqualTo(1);
    t.advance(Duration.ofMillis(2));
    l.tick(t.read());
    assertThat(asked[0]).isEqualTo(2);
    assertThat(l.mode()).isEqualTo(FleetMode.LOCAL_FALLBACK);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void aSourceThatThrowsFallsBack(long start) {
    ManualTicker t = new ManualTicker(start);
    FleetLimiter l =
        limiter(
            t,
            n -> {
              throw new IllegalStateException("not connected");
            },
            5);
    assertThat(l.tryAcquire(t.read())).as("the local share answers at once").isTrue();
    assertThat(l.mode()).isEqualTo(FleetMode.LOCAL_FALLBACK);
  }

  @ParameterizedTest
  @ValueSource(longs = {0L, NEAR_WRAP})
  void lateLeasesAddNothingAndTheReturnToSharedStartsFromTheNewLeaseAlone(long start) {
    ManualTicker t = new ManualTicker(start);
    FakeLeaseSource src = new FakeLeaseSource(t, 300, 30);
    src.latencyNanos = 20 * MS;
    FleetLimiter l = limiter(t, src, 5);
    for (int i = 0; i < 50; i++) { // half a second of late leases, probed every 100 ms
      l.tick(t.read());
      src.advance(10 * MS);
    }
    assertThat(l.mode()).isEqualTo(FleetMode.LOCAL_FALLBACK);
    assertThat(src.given).as("the bucket did give tokens").isGreaterThanOrEqualTo(20);
    assertThat(l.stats().held()).as("late leases are not kept").isZero();
    src.latencyNanos = MS;
    for (int i = 0; i < 20 && l.mode() != FleetMode.SHARED; i++) {
      l.tick(t.read());
      src.advance(10 * MS);
    }
    assertThat(l.mode()).isEqualTo(FleetMode.SHARED);
    assertThat(l.stats().held()).as("only the lease that brought it back").isEqualTo(5);
  }
}
