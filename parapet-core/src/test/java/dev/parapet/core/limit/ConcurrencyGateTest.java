package dev.parapet.core.limit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.RandomSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ConcurrencyGateTest {
  private static final long MS = 1_000_000L;

  /** Records every sample and answers with a settable limit. */
  static final class RecordingLimit implements LimitAlgorithm {
    final List<String> samples = new ArrayList<>();
    int limit;
    Runnable duringSample = () -> {};

    RecordingLimit(int limit) {
      this.limit = limit;
    }

    @Override
    public int limit() {
      return limit;
    }

    @Override
    public int onSample(long startNanos, long rttNanos, int inflight, boolean dropped) {
      samples.add("rtt=" + rttNanos + " inflight=" + inflight + (dropped ? " dropped" : ""));
      Runnable r = duringSample;
      duringSample = () -> {};
      r.run();
      return limit;
    }
  }

  @Test
  void admitsUpToTheLimitThenRejects() {
    ConcurrencyGate gate = new ConcurrencyGate(FixedLimit.of(2));
    Permit a = new Permit();
    Permit b = new Permit();
    Permit c = new Permit();
    assertThat(gate.tryAcquire(a, 0)).isTrue();
    assertThat(gate.tryAcquire(b, 0)).isTrue();
    assertThat(gate.tryAcquire(c, 0)).isFalse();
    assertThat(c.isActive()).isFalse();
    assertThat(gate.inflight()).isEqualTo(2);
    assertThat(gate.rejectedCount()).isEqualTo(1);
    assertThat(a.onSuccess(1)).isTrue();
    assertThat(gate.tryAcquire(c, 1)).isTrue();
    assertThat(gate.inflight()).isEqualTo(2);
  }

  @Test
  void secondCompletionIsACountedNoOp() {
    ConcurrencyGate gate = new ConcurrencyGate(FixedLimit.of(2));
    Permit a = new Permit();
    Permit b = new Permit();
    gate.tryAcquire(a, 0);
    gate.tryAcquire(b, 0);
    assertThat(a.onSuccess(5)).isTrue();
    assertThat(a.onDropped(6)).isFalse();
    assertThat(a.onIgnore(7)).isFalse();
    assertThat(gate.inflight()).as("b still holds its slot").isEqualTo(1);
    assertThat(gate.misuseCount()).isEqualTo(2);
    assertThat(new Permit().onSuccess(0)).as("never acquired").isFalse();
  }

  @Test
  void permitIsReusableAfterCompletionButNotWhileActive() {
    ConcurrencyGate gate = new ConcurrencyGate(FixedLimit.of(5));
    Permit p = new Permit();
    assertThat(gate.tryAcquire(p, 0)).isTrue();
    assertThatThrownBy(() -> gate.tryAcquire(p, 0))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("permit : active (expected: idle)");
    p.onIgnore(1);
    assertThat(gate.tryAcquire(p, 2)).isTrue();
    assertThat(p.startNanos()).isEqualTo(2);
    assertThat(gate.inflight()).isEqualTo(1);
  }

  @Test
  void completionsFeedTheAlgorithmExceptIgnores() {
    RecordingLimit algo = new RecordingLimit(10);
    ConcurrencyGate gate = new ConcurrencyGate(algo);
    Permit a = new Permit();
    Permit b = new Permit();
    Permit c = new Permit();
    gate.tryAcquire(a, 100);
    gate.tryAcquire(b, 100);
    gate.tryAcquire(c, 100);
    a.onSuccess(150);
    b.onDropped(400);
    c.onIgnore(500);
    assertThat(algo.samples).containsExactly("rtt=50 inflight=1", "rtt=300 inflight=2 dropped");
  }

  @Test
  void rttIsMeasuredAcrossNanoTimeWrapAround() {
    RecordingLimit algo = new RecordingLimit(10);
    ConcurrencyGate gate = new ConcurrencyGate(algo);
    ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - 5);
    Permit p = new Permit();
    gate.tryAcquire(p, ticker.read());
    p.onSuccess(ticker.advance(12).read());
    assertThat(algo.samples).containsExactly("rtt=12 inflight=1");
  }

  @Test
  void newLimitAppliesToTheNextAcquire() {
    RecordingLimit algo = new RecordingLimit(3);
    ConcurrencyGate gate = new ConcurrencyGate(algo);
    Permit[] permits = {new Permit(), new Permit(), new Permit(), new Permit()};
    for (int i = 0; i < 3; i++) {
      assertThat(gate.tryAcquire(permits[i], 0)).isTrue();
    }
    algo.limit = 1;
    permits[0].onSuccess(1);
    assertThat(gate.limit()).isEqualTo(1);
    assertThat(gate.inflight()).as("no one is evicted").isEqualTo(2);
    assertThat(gate.tryAcquire(permits[3], 1)).isFalse();
    permits[1].onSuccess(2);
    assertThat(gate.tryAcquire(permits[3], 2)).isFalse();
    permits[2].onSuccess(3);
    assertThat(gate.tryAcquire(permits[3], 3)).isTrue();
    algo.limit = 0;
    permits[3].onSuccess(4);
    assertThat(gate.limit()).as("never below 1").isEqualTo(1);
  }

  @Test
  void slotListenerHearsEveryCompletionOnTheCompletingThread() {
    List<Long> freed = new ArrayList<>();
    ConcurrencyGate gate = new ConcurrencyGate(FixedLimit.of(2), freed::add);
    Permit p = new Permit();
    gate.tryAcquire(p, 0);
    p.onSuccess(7);
    gate.tryAcquire(p, 8);
    p.onIgnore(9);
    p.onIgnore(10);
    assertThat(freed).containsExactly(7L, 9L);
  }

  @Test
  void aSampleArrivingWhileAnotherIsFedIsSkippedButADropIsKept() {
    RecordingLimit algo = new RecordingLimit(10);
    ConcurrencyGate gate = new ConcurrencyGate(algo);
    Permit outer = new Permit();
    Permit nestedSuccess = new Permit();
    Permit nestedDrop = new Permit();
    Permit later = new Permit();
    gate.tryAcquire(outer, 0);
    gate.tryAcquire(nestedSuccess, 0);
    gate.tryAcquire(nestedDrop, 0);
    gate.tryAcquire(later, 0);
    // While the outer sample is being fed, two more completions arrive: they find the lock taken.
    algo.duringSample =
        () -> {
          nestedSuccess.onSuccess(20);
          nestedDrop.onDropped(30);
        };
    outer.onSuccess(10);
    assertThat(gate.skippedSamples()).isEqualTo(1);
    assertThat(gate.inflight()).isEqualTo(1);
    later.onSuccess(40);
    assertThat(algo.samples)
        .containsExactly("rtt=10 inflight=1", "rtt=40 inflight=4 dropped", "rtt=40 inflight=4");
  }

  /** Seeded single-thread sequences against a model: success iff the model has room. */
  @ParameterizedTest
  @ValueSource(strings = {"fixed", "aimd", "vegas", "gradient2"})
  void matchesAReferenceModelOnRandomSequences(String name) {
    for (long seed = 1; seed <= 30; seed++) {
      RandomSource random = RandomSource.seeded(seed);
      LimitAlgorithm algo = LimitAlgorithm.named(name, 5, 1, 12, RandomSource.seeded(-seed));
      ConcurrencyGate gate = new ConcurrencyGate(algo);
      Permit[] permits = new Permit[20];
      for (int i = 0; i < permits.length; i++) {
        permits[i] = new Permit();
      }
      int modelInflight = 0;
      long misuse = 0;
      long now = Long.MAX_VALUE - 1000 * MS; // crosses the wrap-around on the way
      for (int step = 0; step < 2000; step++) {
        now += random.nextLong(5 * MS);
        Permit p = permits[(int) random.nextLong(permits.length)];
        if (!p.isActive()) {
          int limitBefore = gate.limit();
          boolean admitted = gate.tryAcquire(p, now);
          assertThat(admitted)
              .as(
                  "%s seed %d step %d: inflight %d limit %d",
                  name, seed, step, modelInflight, limitBefore)
              .isEqualTo(modelInflight < limitBefore);
          if (admitted) {
            modelInflight++;
          }
        } else {
          long r = random.nextLong(4);
          boolean done = r == 0 ? p.onDropped(now) : r == 1 ? p.onIgnore(now) : p.onSuccess(now);
          assertThat(done).as("seed %d step %d", seed, step).isTrue();
          modelInflight--;
          if (random.nextLong(10) == 0) {
            assertThat(p.onSuccess(now)).isFalse();
            misuse++;
          }
        }
        assertThat(gate.inflight()).as("seed %d step %d", seed, step).isEqualTo(modelInflight);
        assertThat(gate.limit()).as("seed %d", seed).isEqualTo(algo.limit()).isBetween(1, 12);
      }
      assertThat(gate.misuseCount()).as("seed %d", seed).isEqualTo(misuse);
    }
  }
}
