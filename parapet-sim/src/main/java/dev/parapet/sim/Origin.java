package dev.parapet.sim;

import dev.parapet.core.outcome.Outcome;

/**
 * The origin under test: answers attempts from the current phase of the scenario's fault timeline.
 *
 * <p>Latency is log-normal around the phase's median with its {@code sigma}, picked from a
 * per-phase table of 16,384 seeded values (median × e^(σ·z)): one draw and a load per attempt
 * instead of a Gaussian and an {@code exp()}. {@code hang_rate} of attempts never answer and time
 * out; {@code error_rate} of answers are 503s; a {@code down} phase refuses connections within 1
 * ms. Above {@code capacity_rps} (attempts started in the previous second) latency is multiplied by
 * the load factor, attempts ÷ capacity, so overload shows up as slowness first.
 */
final class Origin {
  private static final long SECOND = 1_000_000_000L;
  private static final long CONNECT_REFUSED_NANOS = 1_000_000L;
  private static final int SAMPLES = 16384;

  private final Scenario sc;
  private final SimRandom random;
  private final long[] phaseEnds;
  private final double[][] latencyNanos;
  private int phase;
  private OriginPhase current;
  private double[] currentLatencies;
  private long attemptsThisSecond;
  private double loadFactor = 1.0;

  Origin(Scenario sc, long seed, SimRandom random) {
    this.sc = sc;
    this.random = random;
    this.phaseEnds = new long[sc.timeline().size()];
    for (int i = 0; i < phaseEnds.length; i++) {
      phaseEnds[i] = (long) ((sc.phaseStart(i) + sc.timeline().get(i).seconds()) * SECOND);
    }
    // A stream of its own, so the table does not shift the run's draws.
    Engine tableSource = new Engine(seed ^ 0x632be59bd9b4e019L);
    double[] z = new double[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
      z[i] = tableSource.nextGaussian();
    }
    this.latencyNanos = new double[sc.timeline().size()][];
    for (int i = 0; i < latencyNanos.length; i++) {
      OriginPhase p = sc.timeline().get(i);
      double[] table = new double[SAMPLES];
      for (int k = 0; k < SAMPLES; k++) {
        table[k] = p.medianMillis() * 1_000_000.0 * Math.exp(p.sigma() * z[k]);
      }
      latencyNanos[i] = table;
    }
    this.current = sc.timeline().get(0);
    this.currentLatencies = latencyNanos[0];
  }

  /** Moves to the phase that holds {@code now}. */
  void advance(long now) {
    while (phase < phaseEnds.length - 1 && now - phaseEnds[phase] >= 0) {
      phase++;
      current = sc.timeline().get(phase);
      currentLatencies = latencyNanos[phase];
    }
  }

  /** A new second begins: the load factor is last second's attempts over the capacity. */
  void newSecond() {
    loadFactor = sc.capacityRps() > 0 ? Math.max(1.0, attemptsThisSecond / sc.capacityRps()) : 1.0;
    attemptsThisSecond = 0;
  }

  /**
   * Draws the answer to {@code a}, started now with its timeout: sets its status or failure and
   * returns how long it holds the connection.
   */
  long draw(SimAttempt a) {
    attemptsThisSecond++;
    long timeout = a.timeoutNanos();
    OriginPhase p = current;
    if (p.down()) {
      a.failure = Outcome.CONNECT_FAILURE;
      return CONNECT_REFUSED_NANOS;
    }
    if (p.hangRate() > 0 && random.nextDouble() < p.hangRate()) {
      a.failure = Outcome.TIMEOUT;
      return timeout;
    }
    long latency = Math.max(1L, (long) (currentLatencies[random.nextInt(SAMPLES)] * loadFactor));
    if (latency > timeout) {
      a.failure = Outcome.TIMEOUT;
      return timeout;
    }
    a.status = p.errorRate() > 0 && random.nextDouble() < p.errorRate() ? 503 : 200;
    return latency;
  }
}
