package dev.parapet.sim;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.sim.Series.Col;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The built-in scenarios, each straight from a seed's arithmetic, each with an unprotected and a
 * protected variant. Protection always uses the core's defaults (DESIGN.md), never tuned values.
 */
final class Scenarios {
  private Scenarios() {}

  static final String RETRY_STORM = "retry-storm";
  static final String SLOW_ORIGIN = "slow-origin";
  static final String SYNCHRONIZED_PROBES = "synchronized-probes";
  static final String TIERED_TIMEOUTS = "tiered-timeouts";

  /**
   * retry-storm's fault: 1,000 workers serve 7,000 attempts/s when the mean service time is 1/7 s,
   * a log-normal median of (1000 / 7) / e^(0.3² / 2) ms.
   */
  static final double FAULT_MEDIAN_MILLIS = 1000.0 / 7 / Math.exp(0.3 * 0.3 / 2);

  /** Name → scenario, in name order. */
  static Map<String, Scenario> builtIn() {
    Map<String, Scenario> m = new TreeMap<>();
    for (Scenario s : List.of(retryStorm(), slowOrigin(), synchronizedProbes(), tieredTimeouts())) {
      m.put(s.name(), s);
    }
    return m;
  }

  /**
   * Seed 000: "If your edge concurrency is 10k requests per second and your origin starts shedding
   * 30% of traffic with timeouts, a naive retry policy with just one retry effectively pushes 13k
   * attempts per second at an origin that can barely handle 7k." 10 PoPs × 1,000 rps; 30 % of
   * attempts hang until the 1 s attempt timeout (the edge allows 3 s, so one retry fits), then the
   * origin goes hard down for 20 s, where a naive retry doubles the load.
   */
  static Scenario retryStorm() {
    return new Scenario(
        RETRY_STORM,
        "10k rps of cache misses; the origin's capacity falls from 12k to 7k rps, then it goes"
            + " down; one naive retry vs retry budget + breaker",
        10,
        1,
        5000,
        2000,
        1.0,
        80,
        new OriginCapacity(1000, 10_000, true),
        new EdgeCache(0.5, 0.5),
        500,
        10,
        List.of(
            OriginPhase.healthy("healthy", 10, 80),
            OriginPhase.healthy("capacity-7k", 40, FAULT_MEDIAN_MILLIS),
            OriginPhase.downFor(20),
            OriginPhase.healthy("recovery", 60, 80)),
        List.of(
            new Variant("naive retry", null, RetryMode.NAIVE, 0, 0, List.of(3000L, 1000L)),
            new Variant(
                "budget+breaker",
                BreakerPolicy.defaults(),
                RetryMode.BUDGET,
                0.20,
                5,
                List.of(3000L, 1000L))));
  }

  /**
   * Seed 001: "10,000 worker connections per node and a 10-second origin read timeout. If your
   * origin's p50 suddenly shifts from 120ms to 4 seconds ... you've reduced your effective capacity
   * by a factor of 30." One node offered more than it can serve in both phases, so the answered
   * rate is its capacity (Little's law: workers / mean hold).
   */
  static Scenario slowOrigin() {
    return new Scenario(
        SLOW_ORIGIN,
        "10,000 workers, 10 s timeout, p50 120 ms -> 4 s; unprotected vs tiered deadline + breaker",
        1,
        1,
        10_000,
        100_000,
        1.0,
        120,
        OriginCapacity.UNLIMITED,
        EdgeCache.NONE,
        500,
        10,
        List.of(
            new OriginPhase("healthy", 20, 120, 0.2, 0, 0, false),
            new OriginPhase("brownout-4s", 60, 4000, 0.2, 0, 0, false),
            new OriginPhase("recovery", 120, 120, 0.2, 0, 0, false)),
        List.of(
            new Variant("10s timeout", null, RetryMode.NONE, 0, 0, List.of(10_000L)),
            new Variant(
                "8/5/3+breaker",
                BreakerPolicy.defaults(),
                RetryMode.NONE,
                0,
                0,
                List.of(8000L, 5000L, 3000L))));
  }

  /**
   * Seed 000: "without [jitter], 200 PoPs all probing at the same second". 200 PoPs see the origin
   * go hard down at the same moment, trip on connect failures together, and re-probe after the open
   * time: exactly (no jitter) or within ±20 % (the core's default).
   */
  static Scenario synchronizedProbes() {
    BreakerPolicy jittered = BreakerPolicy.defaults();
    BreakerPolicy exact =
        jittered.toBuilder().open(jittered.openBase(), jittered.openMax(), 0.0).build();
    return new Scenario(
        SYNCHRONIZED_PROBES,
        "200 PoPs whose breakers opened together re-probe: no jitter vs the core's +-20% jitter",
        200,
        1,
        1000,
        20,
        1.0,
        50,
        OriginCapacity.UNLIMITED,
        EdgeCache.NONE,
        500,
        10,
        List.of(
            OriginPhase.healthy("healthy", 5, 50),
            OriginPhase.downFor(200),
            OriginPhase.healthy("recovery", 300, 50)),
        List.of(
            new Variant("no jitter", exact, RetryMode.NONE, 0, 0, List.of(1000L)),
            new Variant("jitter 20%", jittered, RetryMode.NONE, 0, 0, List.of(1000L))));
  }

  /**
   * Seed 001: "we set identical 30-second timeouts at every tier ... a 4s origin slowdown held 30s
   * of concurrency at each tier. Under load: worker_connections 4096 exhausted" — replaced by "Edge
   * 8s, Shield 5s, Origin-connector 3s + circuit breaker". 1,000 rps go to the browning-out API
   * (p50 4 s, 15 % of attempts hang), 500 rps are healthy and share the 4,096 workers. The edge's
   * cache answers half of the API's requests (so 500 rps reach the API origin) and holds a stale
   * copy for half of the misses that fail (seed 001: "users get a 25ms stale hit instead of a
   * 504"), as in retry-storm.
   */
  static Scenario tieredTimeouts() {
    return new Scenario(
        TIERED_TIMEOUTS,
        "edge/shield/connector timeouts 30/30/30 s vs 8/5/3 s (and + breaker) during a 4 s"
            + " brownout",
        1,
        1,
        4096,
        1500,
        2.0 / 3,
        50,
        OriginCapacity.UNLIMITED,
        new EdgeCache(0.5, 0.5),
        500,
        10,
        List.of(
            OriginPhase.healthy("healthy", 10, 100),
            new OriginPhase("brownout-4s", 60, 4000, 0.5, 0, 0.15, false),
            OriginPhase.healthy("recovery", 90, 100)),
        List.of(
            new Variant("30/30/30", null, RetryMode.NONE, 0, 0, List.of(30_000L, 30_000L, 30_000L)),
            new Variant("8/5/3", null, RetryMode.NONE, 0, 0, List.of(8000L, 5000L, 3000L)),
            new Variant(
                "8/5/3+breaker",
                BreakerPolicy.defaults(),
                RetryMode.NONE,
                0,
                0,
                List.of(8000L, 5000L, 3000L))));
  }

  /** Runs every variant of {@code scenario} with the same seed. */
  static List<RunResult> runAll(Scenario scenario, long seed) {
    List<RunResult> out = new ArrayList<>();
    for (Variant v : scenario.variants()) {
      out.add(FleetSimulation.run(scenario, v, seed));
    }
    return out;
  }

  /** Capacity ratio for slow-origin: good answers/s healthy ÷ good answers/s in the brownout. */
  static double capacityRatio(RunResult r) {
    double brownout = r.steadyRate(Col.ORIGIN_OK, 1);
    // Under one good answer per second (a lone successful probe) there is no capacity to compare.
    return brownout < 1.0 ? Double.POSITIVE_INFINITY : r.steadyRate(Col.ORIGIN_OK, 0) / brownout;
  }

  /** The second with the most probes and how many, over the whole run. */
  static long[] probePeak(RunResult r) {
    long best = -1;
    int at = 0;
    for (int s = 0; s < r.series().seconds(); s++) {
      long p = r.series().get(s, Col.PROBES);
      if (p > best) {
        best = p;
        at = s;
      }
    }
    return new long[] {at, best};
  }

  /** Scenario-specific lines printed above the summary table. */
  static List<String> extraLines(List<RunResult> runs) {
    List<String> lines = new ArrayList<>();
    String name = runs.get(0).scenario().name();
    switch (name) {
      case RETRY_STORM -> {
        Scenario sc = runs.get(0).scenario();
        lines.add(
            String.format(
                Locale.ROOT,
                "seed 000: %.0f misses/s at an origin that can serve %.0f/s: 30%% of them cannot be"
                    + " answered in time, and one naive retry each makes 1.3x = 13k attempts/s"
                    + " (more once retries fail too); a budget of 20%% of active requests caps"
                    + " retries at 25%% of attempts, and the breaker stops attempts it sees fail",
                sc.offeredRps() * sc.sickShare() * (1 - sc.cache().hitRatio()),
                sc.capacityRps(1)));
        for (RunResult r : runs) {
          lines.add(
              String.format(
                  Locale.ROOT,
                  "%s: origin goodput %.0f/s in %s (capacity %.0f/s), %.0f%% of its busy time"
                      + " on answers no client received",
                  r.variant().name(),
                  r.phaseRate(Col.ORIGIN_OK, 1),
                  sc.timeline().get(1).name(),
                  sc.capacityRps(1),
                  r.faultWastedShare() * 100));
        }
      }
      case SLOW_ORIGIN -> {
        for (RunResult r : runs) {
          lines.add(
              String.format(
                  Locale.ROOT,
                  "%s: good answers/s healthy %.0f, brownout %.0f -> capacity / %s"
                      + " (seed 001: 4 s / 120 ms = 33x)",
                  r.variant().name(),
                  r.steadyRate(Col.ORIGIN_OK, 0),
                  r.steadyRate(Col.ORIGIN_OK, 1),
                  Double.isInfinite(capacityRatio(r))
                      ? "- (no good answers: the deadline cuts every 4 s call, the breaker fails"
                          + " fast)"
                      : String.format(Locale.ROOT, "%.1f", capacityRatio(r))));
        }
      }
      case SYNCHRONIZED_PROBES -> {
        for (RunResult r : runs) {
          long[] peak = probePeak(r);
          lines.add(
              String.format(
                  Locale.ROOT,
                  "%s: most probes in one second: %d (second %d) from %d PoPs",
                  r.variant().name(),
                  peak[1],
                  peak[0],
                  r.scenario().pops()));
        }
      }
      case TIERED_TIMEOUTS -> {
        for (RunResult r : runs) {
          lines.add(
              String.format(
                  Locale.ROOT,
                  "%s: worker-seconds held in the brownout: edge %.0f, shield %.0f, connector %.0f",
                  r.variant().name(),
                  r.faultWorkerSeconds(Col.WS_EDGE_MS),
                  r.faultWorkerSeconds(Col.WS_SHIELD_MS),
                  r.faultWorkerSeconds(Col.WS_CONNECTOR_MS)));
        }
      }
      default -> {}
    }
    return lines;
  }
}
