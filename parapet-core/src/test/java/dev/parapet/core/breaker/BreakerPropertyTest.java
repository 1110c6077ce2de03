package dev.parapet.core.breaker;

import static dev.parapet.core.breaker.Harness.MS;
import static dev.parapet.core.breaker.Harness.S;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Seeded random sequences of arrivals, outcomes, latencies and time steps, checked against a
 * reference model built from the events. Each failure message names the seed that replays it.
 */
class BreakerPropertyTest {

  private static final BreakerPolicy POLICY =
      BreakerPolicy.builder()
          .minRequests(20)
          .open(Duration.ofSeconds(1), Duration.ofSeconds(8), 0.2)
          .halfOpen(3, Duration.ofMillis(500), 2, Duration.ofSeconds(1))
          .probeTimeout(Duration.ofSeconds(5))
          .ramp(0.05, Duration.ofSeconds(2))
          .flapping(1_000, Duration.ofHours(1))
          .build();

  private static final Outcome[] FAILURES = {
    Outcome.TIMEOUT, Outcome.FAILURE_STATUS, Outcome.CONNECT_FAILURE, Outcome.SLOW
  };

  private static final class InFlight {
    final Permit permit;
    final Decision decision;
    final long completeAt;
    final int episode;

    InFlight(Permit permit, Decision decision, long completeAt, int episode) {
      this.permit = permit;
      this.decision = decision;
      this.completeAt = completeAt;
      this.episode = episode;
    }
  }

  /** The reference model: what the events say, and what must therefore hold. */
  private static final class Model implements BreakerListener {
    final long seed;
    State state = State.CLOSED;
    int level;
    long openUntil;
    int episode;
    int probesThisEpisode;
    long lastProbeAt;
    int opens;
    int rampsCompleted;
    final List<String> violations = new ArrayList<>();

    Model(long seed) {
      this.seed = seed;
    }

    void fail(String what, long now) {
      violations.add("seed " + seed + " at " + now + ": " + what);
    }

    @Override
    public void onTransition(TransitionEvent e) {
      long now = e.nowNanos();
      if (e.from() != state) {
        fail("event from " + e.from() + " but model is " + state, now);
      }
      if (!Transition.isLegal(e.from(), e.to())) {
        fail("illegal " + e.from() + " -> " + e.to(), now);
      }
      switch (e.to()) {
        case OPEN -> {
          level = e.from() == State.CLOSED ? 0 : level + 1;
          double base = Math.min(1.0 * S * (1L << Math.min(level, 20)), 8.0 * S);
          if (e.openNanos() < base * 0.8 - 1 || e.openNanos() > base * 1.2 + 1) {
            fail("open for " + e.openNanos() + " at level " + level, now);
          }
          openUntil = now + e.openNanos();
          opens++;
        }
        case HALF_OPEN -> {
          if (now - openUntil < 0) {
            fail("half-open before the backoff ended", now);
          }
          episode++;
          probesThisEpisode = 0;
        }
        case CLOSED -> {
          if (e.reason() == Reason.RAMP_COMPLETE) {
            level = 0;
            rampsCompleted++;
          }
        }
        default -> {}
      }
      state = e.to();
    }

    void onDecision(Decision d, long now, List<InFlight> inFlight) {
      if (d.isPermitted() && state == State.OPEN) {
        fail("admitted while OPEN", now);
      }
      if (d == Decision.PROBE) {
        if (state != State.HALF_OPEN) {
          fail("probe outside HALF_OPEN", now);
        }
        probesThisEpisode++;
        if (probesThisEpisode > 1 && now - lastProbeAt < 500 * MS) {
          fail("probes " + (now - lastProbeAt) + "ns apart", now);
        }
        lastProbeAt = now;
        long probesOut =
            inFlight.stream()
                .filter(f -> f.decision == Decision.PROBE && f.episode == episode)
                .count();
        if (probesOut > 1) {
          fail(probesOut + " probes in flight", now);
        }
      }
    }
  }

  @Test
  void randomTrafficNeverBreaksTheRules() {
    int totalOpens = 0;
    int totalRamps = 0;
    for (long seed = 1; seed <= 150; seed++) {
      Model model = run(seed);
      assertThat(model.violations).as("seed %d", seed).isEmpty();
      totalOpens += model.opens;
      totalRamps += model.rampsCompleted;
    }
    // The sequences must actually exercise the machine, or this test proves nothing.
    assertThat(totalOpens).isGreaterThan(500);
    assertThat(totalRamps).isGreaterThan(50);
  }

  private static Model run(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    Model model = new Model(seed);
    long start = rnd.nextBoolean() ? rnd.nextLong() : Long.MAX_VALUE - rnd.nextLong(60 * S);
    CircuitBreaker b =
        new CircuitBreaker(Harness.KEY, POLICY, RandomSource.seeded(seed), model, start);
    long now = start;
    List<InFlight> inFlight = new ArrayList<>();
    double failP = 0;
    for (int step = 0; step < 4_000; step++) {
      if (step % 400 == 0) {
        failP = new double[] {0.0, 0.05, 0.5, 0.9, 1.0}[rnd.nextInt(5)];
      }
      now += rnd.nextInt(50) == 0 ? rnd.nextLong(3 * S) : rnd.nextLong(100 * MS);
      for (Iterator<InFlight> it = inFlight.iterator(); it.hasNext(); ) {
        InFlight f = it.next();
        if (now - f.completeAt >= 0) {
          it.remove();
          Outcome o;
          if (rnd.nextInt(20) == 0) {
            o = Outcome.CLIENT_CANCELLED;
          } else if (rnd.nextDouble() < failP) {
            o = FAILURES[rnd.nextInt(FAILURES.length)];
          } else {
            o = Outcome.SUCCESS;
          }
          f.permit.onOutcome(o, now);
        }
      }
      int arrivals = rnd.nextInt(4);
      for (int i = 0; i < arrivals; i++) {
        Permit p = new Permit().requestId(step);
        Decision d = b.tryAcquire(p, now);
        model.onDecision(d, now, inFlight);
        if (d.isPermitted()) {
          long latency = rnd.nextInt(100) == 0 ? rnd.nextLong(8 * S) : rnd.nextLong(1_500 * MS);
          inFlight.add(new InFlight(p, d, now + latency, model.episode));
        }
      }
    }
    return model;
  }
}
