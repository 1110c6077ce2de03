package dev.parapet.bench.example;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Decision;
import dev.parapet.core.breaker.FlappingEvent;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.Permit;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.TransitionEvent;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.RandomSource;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * A runnable walk through one origin's bad afternoon, in virtual time (a few hundred milliseconds
 * of real time): 200 requests/s against an origin that is healthy, then browns out (p50 120 ms → 4
 * s, many 503s), then refuses connections, then recovers. The same timeline runs twice through the
 * real {@link CircuitBreaker}: once in shadow mode (nothing is rejected: what an unprotected edge
 * does) and once enforcing. It prints every transition and a side-by-side summary.
 *
 * <p>Run it with {@code bin/parapet example}; {@code --seed N} replays another random sequence.
 */
public final class BreakerWalkthrough {
  private static final long MS = 1_000_000L;
  private static final long S = 1_000 * MS;
  private static final int RATE = 200;
  private static final long END = 240 * S;
  private static final long ATTEMPT_TIMEOUT = 3 * S;

  private enum Phase {
    HEALTHY("healthy", 0),
    BROWNOUT("brownout", 30 * S),
    DOWN("hard down", 70 * S),
    RECOVERED("recovered", 110 * S);

    final String label;
    final long startsAt;

    Phase(String label, long startsAt) {
      this.label = label;
      this.startsAt = startsAt;
    }

    static Phase at(long t) {
      Phase p = HEALTHY;
      for (Phase q : values()) {
        if (t - q.startsAt >= 0) {
          p = q;
        }
      }
      return p;
    }
  }

  private record Completion(long at, Permit permit, Outcome outcome) {}

  /** What one run saw. */
  private static final class Totals {
    long offered;
    long attempts;
    long failedAttempts;
    long rejected;
    long heldSeconds; // caller time spent waiting on the origin (seed 001: slow failures hold
    // workers)
    long firstOpenAt = -1;
  }

  private BreakerWalkthrough() {}

  public static void main(String[] args) {
    long seed = 7;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--seed") && i + 1 < args.length) {
        seed = Long.parseLong(args[++i]);
      } else {
        System.err.println("usage: bin/parapet example [--seed N]");
        System.exit(2);
      }
    }
    System.out.println("Parapet breaker walkthrough: one origin, " + RATE + " req/s, virtual time");
    System.out.println(
        "timeline: healthy 0-30 s | brownout 30-70 s (p50 120 ms -> 4 s, 60 % 503) |"
            + " hard down 70-110 s (connection refused) | recovered 110-240 s;"
            + " attempt timeout 3 s");
    System.out.println();
    System.out.println(
        "== shadow mode (decides and reports, rejects nothing: an unprotected edge)");
    Totals shadow = run(Mode.SHADOW, seed, false);
    System.out.println();
    System.out.println("== enforcing (DESIGN.md defaults)");
    Totals enforce = run(Mode.ENFORCE, seed, true);
    System.out.println();
    System.out.printf(Locale.ROOT, "%-44s %14s %14s%n", "", "unprotected", "Parapet");
    row("requests offered", shadow.offered, enforce.offered);
    row("origin attempts", shadow.attempts, enforce.attempts);
    row("failed origin attempts", shadow.failedAttempts, enforce.failedAttempts);
    row("failed fast (503 + Retry-After, or stale)", shadow.rejected, enforce.rejected);
    row(
        "caller-seconds held waiting on the origin",
        shadow.heldSeconds / S,
        enforce.heldSeconds / S);
    System.out.printf(
        Locale.ROOT,
        "%-44s %14s %14s%n",
        "time to open after the brownout began",
        "-",
        enforce.firstOpenAt < 0
            ? "never"
            : String.format(
                Locale.ROOT, "%.1f s", (enforce.firstOpenAt - Phase.BROWNOUT.startsAt) / 1e9));
  }

  private static void row(String label, long a, long b) {
    System.out.printf(Locale.ROOT, "%-44s %14d %14d%n", label, a, b);
  }

  private static Totals run(Mode mode, long seed, boolean print) {
    ManualTicker ticker = new ManualTicker();
    Totals totals = new Totals();
    BreakerListener listener =
        new BreakerListener() {
          @Override
          public void onTransition(TransitionEvent e) {
            if (e.to() == dev.parapet.core.breaker.State.OPEN && totals.firstOpenAt < 0) {
              totals.firstOpenAt = e.nowNanos();
            }
            if (print) {
              System.out.printf(
                  Locale.ROOT,
                  "  t=%6.1fs  %-10s %-9s -> %-9s %-16s calls=%-5d failing=%3.0f%% slow=%3.0f%%%s%n",
                  e.nowNanos() / 1e9,
                  Phase.at(e.nowNanos()).label,
                  e.from(),
                  e.to(),
                  e.reason(),
                  e.observations(),
                  e.failureRate() * 100,
                  e.slowRate() * 100,
                  e.openNanos() > 0
                      ? String.format(Locale.ROOT, "  open for %.1f s", e.openNanos() / 1e9)
                      : "");
            }
          }

          @Override
          public void onFlapping(FlappingEvent e) {
            if (print) {
              System.out.println("  flapping: " + e.opens() + " opens within the hour");
            }
          }
        };
    BreakerPolicy policy = BreakerPolicy.builder().mode(mode).build();
    CircuitBreaker breaker =
        new CircuitBreaker(
            BreakerKey.of(Scope.ROUTE, "/api/"), policy, RandomSource.seeded(seed), listener, 0);
    SplittableRandom origin = new SplittableRandom(seed);
    PriorityQueue<Completion> pending = new PriorityQueue<>((a, b) -> Long.compare(a.at(), b.at()));
    long interval = S / RATE;
    for (long t = 0; t < END; t += interval) {
      ticker.set(t);
      while (!pending.isEmpty() && pending.peek().at() <= t) {
        Completion c = pending.poll();
        c.permit().onOutcome(c.outcome(), c.at());
      }
      totals.offered++;
      Permit permit = new Permit().requestId(totals.offered);
      Decision d = breaker.tryAcquire(permit, t);
      if (!d.isPermitted()) {
        totals.rejected++;
        continue;
      }
      totals.attempts++;
      Phase phase = Phase.at(t);
      long latency;
      Outcome outcome;
      switch (phase) {
        case BROWNOUT -> {
          latency = (long) (4 * S * (0.5 + origin.nextDouble()));
          boolean failed = origin.nextDouble() < 0.6;
          outcome =
              failed
                  ? Outcome.FAILURE_STATUS
                  : (latency > 500 * MS ? Outcome.SLOW : Outcome.SUCCESS);
        }
        case DOWN -> {
          latency = 1 * MS;
          outcome = Outcome.CONNECT_FAILURE;
        }
        default -> {
          latency = (long) (120 * MS * (0.5 + origin.nextDouble()));
          outcome = origin.nextDouble() < 0.01 ? Outcome.FAILURE_STATUS : Outcome.SUCCESS;
        }
      }
      if (latency > ATTEMPT_TIMEOUT) {
        // Every attempt has a deadline (DESIGN.md: origin timeout 3 s): the caller gives up.
        latency = ATTEMPT_TIMEOUT;
        outcome = Outcome.TIMEOUT;
      }
      if (outcome.isFailure()) {
        totals.failedAttempts++;
      }
      totals.heldSeconds += latency;
      pending.add(new Completion(t + latency, permit, outcome));
    }
    if (print) {
      System.out.printf(
          Locale.ROOT,
          "  final state %s; %d probes; %d calls rejected%n",
          breaker.state(),
          breaker.probesSentCount(),
          breaker.rejectedCount());
    }
    return totals;
  }
}
