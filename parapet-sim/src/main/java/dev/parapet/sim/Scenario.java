package dev.parapet.sim;

import java.util.List;

/**
 * A fleet, its traffic, one origin's fault timeline, and the variants to compare.
 *
 * <p>The fleet is {@code pops × serversPerPop} edge servers, each with {@code workersPerServer}
 * worker slots (a request holds one from arrival until it is answered) and {@code ratePerServer}
 * requests per second offered. A share {@code sickShare} of requests goes to the origin whose
 * {@link OriginPhase timeline} is played; the rest are served by a healthy origin (or cache) with
 * {@code healthyMedianMillis} latency and share the same workers, which is how a sick origin hurts
 * healthy traffic. The sick origin has {@code capacity} (workers and an accept queue, see {@link
 * Origin}); the edge's {@code cache} answers a share of the sick origin's requests and serves stale
 * copies of some of the rest when they fail.
 */
record Scenario(
    String name,
    String description,
    int pops,
    int serversPerPop,
    int workersPerServer,
    double ratePerServer,
    double sickShare,
    double healthyMedianMillis,
    OriginCapacity capacity,
    EdgeCache cache,
    double slowThresholdMillis,
    int tickMillis,
    List<OriginPhase> timeline,
    List<Variant> variants) {

  Scenario {
    timeline = List.copyOf(timeline);
    variants = List.copyOf(variants);
  }

  int servers() {
    return pops * serversPerPop;
  }

  double offeredRps() {
    return servers() * ratePerServer;
  }

  double durationSeconds() {
    double s = 0;
    for (OriginPhase p : timeline) {
      s += p.seconds();
    }
    return s;
  }

  /** Start of phase {@code i} in seconds. */
  double phaseStart(int i) {
    double s = 0;
    for (int k = 0; k < i; k++) {
      s += timeline.get(k).seconds();
    }
    return s;
  }

  /**
   * What the origin serves per second with every worker busy in phase {@code i}: workers ÷ mean
   * service time; 0 when its workers are unlimited.
   */
  double capacityRps(int i) {
    return capacity.limited() ? capacity.workers() * 1000.0 / timeline.get(i).meanMillis() : 0;
  }

  /**
   * The same fleet with per-server rate, workers and origin capacity multiplied by {@code factor}
   * (ratios, latencies and the timeline unchanged): for quick runs and tests.
   */
  Scenario scaled(double factor) {
    if (!(factor > 0 && factor <= 100)) {
      throw new IllegalArgumentException("scale : " + factor + " (expected: in (0, 100])");
    }
    return new Scenario(
        name,
        description,
        pops,
        serversPerPop,
        Math.max(1, (int) Math.round(workersPerServer * factor)),
        ratePerServer * factor,
        sickShare,
        healthyMedianMillis,
        capacity.scaled(factor),
        cache,
        slowThresholdMillis,
        tickMillis,
        timeline,
        variants);
  }

  /** The same scenario with another fleet size (PoPs), the rest unchanged. */
  Scenario withPops(int newPops) {
    return new Scenario(
        name,
        description,
        newPops,
        serversPerPop,
        workersPerServer,
        ratePerServer,
        sickShare,
        healthyMedianMillis,
        capacity.scaled((double) newPops / pops),
        cache,
        slowThresholdMillis,
        tickMillis,
        timeline,
        variants);
  }
}
