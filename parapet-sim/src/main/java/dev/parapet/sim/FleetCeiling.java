package dev.parapet.sim;

import dev.parapet.core.fleet.FleetLimitListener;
import dev.parapet.core.fleet.FleetLimitSettings;
import dev.parapet.core.fleet.FleetLimiter;
import dev.parapet.core.fleet.FleetMode;
import dev.parapet.core.fleet.Lease;
import dev.parapet.core.fleet.LeaseSource;
import dev.parapet.core.time.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The {@code fleet-ceiling} scenario: 300 PoPs keep one fleet-wide ceiling on an origin with the
 * proxy's own {@link FleetLimiter}, over a simulated shared bucket (the Redis script's token
 * bucket, in virtual time) that is healthy, then slow (answers after 8 ms, past the 5 ms lease
 * timeout), then down, then back. Demand is skewed between PoPs (weights drawn uniformly in [0.25,
 * 1.75]) and totals 1.5 times the ceiling, so the ceiling binds in every phase.
 *
 * <p>Time moves in 1 ms steps; each PoP's arrivals in a step are its rate times the step, the
 * fraction drawn from the seed; each limiter is ticked every 20 ms as the proxy does. What it
 * shows: shared, the fleet gets the ceiling whatever the skew; falling back, each PoP keeps {@code
 * rate / instances}, so the fleet stays below the ceiling (hot PoPs are capped at their share while
 * cold ones leave theirs unused); back to shared within a probe interval of the bucket's return.
 */
final class FleetCeiling {
  static final String NAME = "fleet-ceiling";
  static final String DESCRIPTION =
      "300 PoPs share a 30k/s origin ceiling through a shared bucket that turns slow, then goes"
          + " down: the proxy's fleet limiter, shared vs local fallback";

  static final double CEILING = 30_000;
  static final int BURST = 3_000;
  static final double OFFERED = 1.5 * CEILING;
  private static final long MS = 1_000_000L;
  private static final long STEP = MS;

  /** A phase of the shared bucket: its answers' latency, or down. */
  record Phase(String name, int seconds, long latencyNanos, boolean down) {}

  static final List<Phase> PHASES =
      List.of(
          new Phase("healthy", 20, 500_000, false),
          new Phase("slow (8 ms)", 10, 8 * MS, false),
          new Phase("down", 15, 200_000, true),
          new Phase("back", 15, 500_000, false));

  /** One phase's totals. */
  record PhaseResult(
      String name,
      double seconds,
      long offered,
      long granted,
      long refused,
      int maxLocal,
      int endLocal,
      long leases,
      long leaseErrors) {
    double grantedPerSecond() {
      return granted / seconds;
    }
  }

  /** Per-second series: offered, granted, PoPs falling back. */
  record Second(int second, String phase, long offered, long granted, int local) {}

  record Result(int pops, long seed, List<PhaseResult> phases, List<Second> seconds) {
    String summary() {
      StringBuilder b = new StringBuilder();
      b.append(
          String.format(
              Locale.ROOT,
              "fleet-ceiling: %d PoPs, ceiling %.0f/s (burst %d), offered %.0f/s skewed, seed %d%n",
              pops,
              CEILING,
              BURST,
              OFFERED,
              seed));
      b.append(
          String.format(
              Locale.ROOT,
              "%-12s %9s %9s %8s %15s %11s%n",
              "phase",
              "origin/s",
              "ceiling",
              "refused",
              "PoPs local max",
              "leases/s"));
      for (PhaseResult p : phases) {
        b.append(
            String.format(
                Locale.ROOT,
                "%-12s %9.0f %8.1f%% %7.1f%% %9d / %-4d %11.0f%n",
                p.name(),
                p.grantedPerSecond(),
                100 * p.grantedPerSecond() / CEILING,
                100.0 * p.refused() / Math.max(1, p.offered()),
                p.maxLocal(),
                pops,
                p.leases() / p.seconds()));
      }
      return b.toString();
    }

    String csv() {
      StringBuilder b = new StringBuilder("second,phase,offered,granted,pops_local\n");
      for (Second s : seconds) {
        b.append(s.second())
            .append(',')
            .append(s.phase())
            .append(',')
            .append(s.offered())
            .append(',')
            .append(s.granted())
            .append(',')
            .append(s.local())
            .append('\n');
      }
      return b.toString();
    }
  }

  /** The shared bucket in virtual time: refill, partial grants, answers after the latency. */
  private static final class SimBucket implements LeaseSource {
    private final ManualTicker ticker;
    private double tokens = BURST;
    private long last;
    private Phase phase = PHASES.get(0);
    private final PriorityQueue<Pending> pending =
        new PriorityQueue<>((a, b) -> Long.compare(a.dueAt - b.dueAt, 0));
    long leases;
    long errors;

    private record Pending(long dueAt, CompletableFuture<Lease> future, @Nullable Lease lease) {}

    SimBucket(ManualTicker ticker) {
      this.ticker = ticker;
      this.last = ticker.read();
    }

    @Override
    public CompletionStage<Lease> lease(int want) {
      long now = ticker.read();
      CompletableFuture<Lease> f = new CompletableFuture<>();
      if (phase.down()) {
        pending.add(new Pending(now + phase.latencyNanos(), f, null));
        return f;
      }
      tokens = Math.min(BURST, tokens + (now - last) / 1e9 * CEILING);
      last = now;
      int granted = (int) Math.min(want, Math.floor(tokens));
      tokens -= granted;
      long wait = granted < want ? (long) Math.ceil((want - granted - tokens) / CEILING * 1e9) : 0;
      pending.add(
          new Pending(now + phase.latencyNanos(), f, new Lease(granted, Math.max(0, wait))));
      return f;
    }

    void completeDue(long now) {
      while (!pending.isEmpty() && pending.peek().dueAt - now <= 0) {
        Pending p = pending.poll();
        if (p == null) {
          return;
        }
        Lease lease = p.lease();
        if (lease == null) {
          errors++;
          p.future().completeExceptionally(new IllegalStateException("connection refused"));
        } else {
          leases++;
          p.future().complete(lease);
        }
      }
    }
  }

  private FleetCeiling() {}

  static Result run(long seed, int pops) {
    SplittableRandom random = new SplittableRandom(seed);
    ManualTicker ticker = new ManualTicker(0);
    SimBucket bucket = new SimBucket(ticker);
    FleetLimitSettings settings =
        FleetLimitSettings.of(CEILING, BURST, pops, FleetLimitSettings.DEFAULT_TIMEOUT);
    FleetLimiter[] limiters = new FleetLimiter[pops];
    double[] perStep = new double[pops];
    double[] carry = new double[pops];
    double weights = 0;
    for (int i = 0; i < pops; i++) {
      limiters[i] = new FleetLimiter(settings, bucket, ticker, FleetLimitListener.NONE);
      perStep[i] = 0.25 + 1.5 * random.nextDouble();
      weights += perStep[i];
    }
    for (int i = 0; i < pops; i++) {
      perStep[i] = perStep[i] / weights * OFFERED * STEP / 1e9;
    }
    List<PhaseResult> phases = new ArrayList<>();
    List<Second> seconds = new ArrayList<>();
    int second = 0;
    for (Phase phase : PHASES) {
      bucket.phase = phase;
      long offered = 0;
      long granted = 0;
      long refused = 0;
      int maxLocal = 0;
      long leases0 = bucket.leases;
      long errors0 = bucket.errors;
      long steps = phase.seconds() * 1_000L;
      long secOffered = 0;
      long secGranted = 0;
      for (long s = 1; s <= steps; s++) {
        ticker.advance(STEP);
        long now = ticker.read();
        bucket.completeDue(now);
        boolean tick = s % 20 == 0;
        for (int i = 0; i < pops; i++) {
          double want = perStep[i] + carry[i];
          int n = (int) want;
          if (random.nextDouble() < want - n) {
            n++;
            carry[i] = want - n;
          } else {
            carry[i] = want - n;
          }
          FleetLimiter l = limiters[i];
          for (int k = 0; k < n; k++) {
            if (l.tryAcquire(now)) {
              granted++;
              secGranted++;
            } else {
              refused++;
            }
          }
          offered += n;
          secOffered += n;
          if (tick) {
            l.tick(now);
          }
        }
        if (s % 1000 == 0) {
          int local = 0;
          for (FleetLimiter l : limiters) {
            local += l.mode() == FleetMode.LOCAL_FALLBACK ? 1 : 0;
          }
          maxLocal = Math.max(maxLocal, local);
          seconds.add(new Second(second++, phase.name(), secOffered, secGranted, local));
          secOffered = 0;
          secGranted = 0;
        }
      }
      int endLocal = seconds.get(seconds.size() - 1).local();
      phases.add(
          new PhaseResult(
              phase.name(),
              phase.seconds(),
              offered,
              granted,
              refused,
              maxLocal,
              endLocal,
              bucket.leases - leases0,
              bucket.errors - errors0));
    }
    return new Result(pops, seed, phases, seconds);
  }

  /** The lease timeout the scenario's limiters use, for the docs and tests. */
  static Duration timeout() {
    return FleetLimitSettings.DEFAULT_TIMEOUT;
  }
}
