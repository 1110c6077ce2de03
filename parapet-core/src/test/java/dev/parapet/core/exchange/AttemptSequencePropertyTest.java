package dev.parapet.core.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.deadline.Deadline;
import dev.parapet.core.deadline.DeadlinePolicy;
import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.hedge.HedgeRateBudget;
import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.limit.FixedLimit;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.retry.RetryAfter;
import dev.parapet.core.retry.RetryBudget;
import dev.parapet.core.retry.RetryOn;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Seeded random interleavings of many requests over one breaker, one admission controller and one
 * extra-load budget: arrivals, connections, answers of every kind, failures, timers, admission
 * decisions, clients leaving, time passing (from start times near the wrap of {@code nanoTime}
 * too). Whatever happens, every admitted permit is completed exactly once, every started attempt is
 * released exactly once, budgets and slots all come back, and no request hedges twice. A failure
 * names the seed that replays it.
 */
class AttemptSequencePropertyTest {
  private static final long MS = 1_000_000L;
  private static final int[] STATUSES = {200, 200, 200, 404, 500, 503};
  private static final Outcome[] FAILURES = {
    Outcome.TIMEOUT, Outcome.CONNECT_FAILURE, Outcome.MALFORMED_RESPONSE
  };

  @Test
  void everythingTakenIsGivenBackExactlyOnce() {
    for (long seed = 1; seed <= 300; seed++) {
      run(seed);
    }
  }

  private static void run(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    long now = seed % 3 == 0 ? Long.MAX_VALUE - 5_000 * MS : rnd.nextLong();
    CircuitBreaker breaker =
        new CircuitBreaker(
            BreakerKey.of(Scope.ORIGIN, "o"),
            BreakerPolicy.builder()
                .minRequests(10)
                .open(Duration.ofMillis(200), Duration.ofSeconds(2), 0.2)
                .halfOpen(3, Duration.ofMillis(20), 2, Duration.ofMillis(500))
                .ramp(0.05, Duration.ofMillis(500))
                .build(),
            RandomSource.seeded(seed),
            BreakerListener.NONE,
            now);
    AdmissionController admission = new AdmissionController(FixedLimit.of(4), 3, 20 * MS, 100 * MS);
    ExtraLoadBudget extra =
        new ExtraLoadBudget(new RetryBudget(0.5, 2), ExtraLoadBudget.Sharing.SHARED);
    RollingLatencyHistogram latency = RollingLatencyHistogram.withDefaults(now);
    AttemptPolicy policy =
        AttemptPolicy.builder(
                Duration.ofMillis(300),
                new RetryPolicy(
                    3,
                    Duration.ofMillis(5),
                    Duration.ofMillis(50),
                    Duration.ofMillis(20),
                    RandomSource.seeded(seed + 1),
                    extra))
            .latency(latency)
            .retryOn(new RetryOn(true, true, List.of("500-503")))
            .hedge(
                new HedgePolicy(
                    latency,
                    0.95,
                    Duration.ofMillis(5),
                    1,
                    Duration.ofMillis(10),
                    new HedgeRateBudget(0.5, 5),
                    extra),
                Duration.ofMillis(30))
            .build();
    DeadlinePolicy deadlines = new DeadlinePolicy(Duration.ofMillis(10), Duration.ofMillis(20));
    List<ScriptedExchange> all = new ArrayList<>();
    for (int step = 0; step < 600; step++) {
      int action = rnd.nextInt(100);
      if (action < 12 || all.isEmpty()) {
        ScriptedExchange x =
            new ScriptedExchange(
                breaker,
                policy,
                deadlines,
                Deadline.expiresAt((50 + rnd.nextInt(1_000)) * MS, now),
                rnd.nextInt(4) == 0 ? null : admission,
                rnd.nextInt(5) != 0,
                rnd.nextBoolean());
        x.poolFull = rnd.nextInt(20) == 0;
        all.add(x);
        x.begin(now);
      } else if (action < 70) {
        ScriptedExchange x = all.get(rnd.nextInt(all.size()));
        List<ScriptedExchange.Try> live = new ArrayList<>();
        for (ScriptedExchange.Try t : x.started) {
          if (t.isLive()) {
            live.add(t);
          }
        }
        if (!live.isEmpty()) {
          act(x, live.get(rnd.nextInt(live.size())), rnd, now);
        }
      } else if (action < 82) {
        ScriptedExchange x = all.get(rnd.nextInt(all.size()));
        x.fire(rnd.nextBoolean() ? AttemptSequence.Timer.RETRY : AttemptSequence.Timer.HEDGE, now);
      } else if (action < 90) {
        for (ScriptedExchange x : all) {
          if (x.admissionHeard) {
            x.resumeAdmission(now);
            break;
          }
        }
      } else if (action < 93) {
        all.get(rnd.nextInt(all.size())).cancel(now);
      } else {
        now += rnd.nextInt(200) * MS;
      }
      // Whoever waits in admission control's queue is a request that still waits for admission.
      long waiting = all.stream().filter(x -> x.phase() == ExchangePhase.ADMISSION).count();
      assertThat(admission.queueDepth()).as("seed " + seed).isLessThanOrEqualTo((int) waiting);
    }
    // Drain: pending admission decisions resume, then every request that is not over is left by
    // its client (which must give everything back too).
    for (ScriptedExchange x : all) {
      if (x.admissionHeard) {
        x.resumeAdmission(now);
      }
    }
    for (ScriptedExchange x : all) {
      x.cancel(now);
    }
    for (ScriptedExchange x : all) {
      if (x.admissionHeard) {
        x.resumeAdmission(now);
      }
    }

    String at = "seed " + seed;
    assertThat(breaker.misuseCount()).as(at).isZero();
    assertThat(admission.inflight()).as(at).isZero();
    assertThat(admission.queueDepth()).as(at).isZero();
    assertThat(admission.misuseCount()).as(at).isZero();
    assertThat(extra.retryBudget().activeRequests()).as(at).isZero();
    assertThat(extra.retryBudget().activeRetries()).as(at).isZero();
    for (ScriptedExchange x : all) {
      assertThat(x.phase().isOver()).as(at).isTrue();
      assertThat(x.timers).as(at).isEmpty();
      assertThat(x.hedges()).as(at).isLessThanOrEqualTo(1);
      assertThat(x.attempts()).as(at).isLessThanOrEqualTo(4);
      for (ScriptedExchange.Try t : x.started) {
        assertThat(t.releases).as(at + " " + t).isEqualTo(1);
        assertThat(t.state()).as(at).isEqualTo(Attempt.State.ENDED);
      }
    }
  }

  /** Something happens to a live attempt: it connects, answers, fails, or completes. */
  private static void act(
      ScriptedExchange x, ScriptedExchange.Try t, SplittableRandom rnd, long now) {
    switch (t.state()) {
      case CONNECTING -> {
        switch (rnd.nextInt(4)) {
          case 0 -> x.onAttemptFailed(t, null, now); // timed out before a connection
          case 1 -> x.onAttemptFailed(t, Outcome.CONNECT_FAILURE, now);
          default -> x.onSent(t, now);
        }
      }
      case SENT -> {
        if (rnd.nextInt(4) == 0) {
          x.onAttemptFailed(t, FAILURES[rnd.nextInt(FAILURES.length)], now);
        } else {
          x.onResponseHead(t, STATUSES[rnd.nextInt(STATUSES.length)], RetryAfter.ABSENT, now);
        }
      }
      case WON -> {
        if (rnd.nextInt(6) == 0) {
          x.onAttemptFailed(t, Outcome.CONNECT_FAILURE, now); // cut short mid-body
        } else {
          x.onResponseComplete(t, now);
        }
      }
      default -> throw new AssertionError("not live: " + t);
    }
  }
}
