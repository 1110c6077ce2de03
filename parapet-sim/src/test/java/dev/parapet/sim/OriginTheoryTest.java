package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.outcome.Outcome;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The origin model against queueing theory: Poisson arrivals and exponential service times into
 * {@link Origin} with c workers must give the closed-form M/M/c results (Erlang C) for the mean
 * wait and the utilisation, and Little's law must hold between the sampled number in the origin and
 * the arrival rate times the mean time inside.
 *
 * <p>Tolerances. Each case runs 1.5 million arrivals with a fixed seed, so it is deterministic. The
 * mean wait of a queue near saturation converges slowly (successive waits are strongly correlated:
 * at ρ = 0.9 in M/M/1 the relaxation time is about 1 / (μ(1 − √ρ)²) ≈ 380 service times), so the
 * tolerance is stated per load: 3 % of the exact mean wait at ρ = 0.5, 5 % at 0.8 and 8 % at 0.9,
 * plus 0.2 % of a service time for the waits that are almost zero (many workers, light load);
 * utilisation within 2 %, Little's law within 1 %. Runs over seeds 1 to 8 stayed within half of
 * these bounds (worst: 0.49 of the wait tolerance, 0.31 % utilisation, 0.55 % Little); a mean
 * service time off by a tenth moves the utilisation by 10 %, five times its tolerance.
 */
class OriginTheoryTest {
  private static final long MS = 1_000_000L;
  private static final long SECOND = 1_000_000_000L;
  private static final int ARRIVALS = 1_500_000;
  private static final double SERVICE_MS = 1.0;
  private static final long TICK = 10 * MS;

  /** What one run of Poisson arrivals into the origin measured. */
  record Measured(double meanWaitMs, double utilisation, double littleL, double littleLambdaW) {}

  static Measured run(int workers, double rho, long seed) {
    double lambdaPerMs = rho * workers / SERVICE_MS;
    int seconds = (int) Math.ceil(ARRIVALS / lambdaPerMs / 1000) + 1;
    OriginPhase exp =
        new OriginPhase(
            "m", seconds, SERVICE_MS, 0, 0, 0, false, OriginPhase.Distribution.EXPONENTIAL);
    SimRandom random = new SimRandom(seed);
    Origin origin =
        new Origin(
            List.of(exp),
            new OriginCapacity(workers, OriginCapacity.UNBOUNDED, false),
            seed,
            random,
            seconds,
            TICK);
    SimRandom arrivals = new SimRandom(seed * 31 + 7);
    long now = 0;
    long nextTick = 0;
    long lastArrival = 0;
    for (int i = 0; i < ARRIVALS; i++) {
      now += (long) (-Math.log(1.0 - arrivals.nextDouble()) / lambdaPerMs * MS);
      while (nextTick <= now) {
        origin.sample(nextTick);
        nextTick += TICK;
      }
      long hold = origin.serve(now, 1000 * SECOND);
      assertThat(origin.lastFailure()).isNull();
      assertThat(hold).isPositive();
      lastArrival = now;
    }
    Series series = new Series(seconds);
    origin.writeTo(series);
    // Whole seconds before the last arrival: the queue is in steady state throughout.
    int full = (int) (lastArrival / SECOND);
    double busyMs = series.sum(Series.Col.ORIGIN_BUSY_MS, 1, full);
    double utilisation = busyMs / 1000.0 / workers / (full - 1);
    double samples = series.sum(Series.Col.ORIGIN_IN_SAMPLES, 1, full);
    double l = samples / ((full - 1) * (SECOND / TICK));
    double accepted = series.sum(Series.Col.ORIGIN_ACCEPTED, 1, full);
    double w = series.sum(Series.Col.ORIGIN_SOJOURN_MS, 1, full) / 1000.0 / accepted;
    double lambdaW = accepted / (full - 1) * w;
    double meanWaitMs = origin.totalWaitNanos() / 1e6 / origin.totalAccepted();
    return new Measured(meanWaitMs, utilisation, l, lambdaW);
  }

  /** Erlang C: the probability that an arrival waits in M/M/c with offered load a = λ/μ. */
  static double erlangC(int c, double a) {
    double rho = a / c;
    double term = 1;
    double sum = 0;
    for (int k = 0; k < c; k++) {
      sum += term;
      term *= a / (k + 1);
    }
    // term is now a^c / c!
    double waiting = term / (1 - rho);
    return waiting / (sum + waiting);
  }

  /** Mean wait in queue of M/M/c: C(c, a) / (cμ − λ), in milliseconds. */
  static double meanWaitMs(int c, double rho) {
    double mu = 1 / SERVICE_MS;
    double lambda = rho * c * mu;
    return erlangC(c, lambda / mu) / (c * mu - lambda);
  }

  static double tolerance(double rho) {
    return rho <= 0.5 ? 0.03 : rho <= 0.8 ? 0.05 : 0.08;
  }

  @ParameterizedTest(name = "M/M/{0} at rho {1}")
  @CsvSource({
    "1, 0.5", "1, 0.8", "1, 0.9", "4, 0.5", "4, 0.8", "4, 0.9", "16, 0.5", "16, 0.8", "16, 0.9"
  })
  void meanWaitAndUtilisationMatchErlangC(int workers, double rho) {
    Measured m = run(workers, rho, 1);
    double exact = meanWaitMs(workers, rho);
    double tol = tolerance(rho) * exact + 0.002 * SERVICE_MS;
    assertThat(m.meanWaitMs())
        .as("mean wait (ms) of M/M/%d at rho %.1f, Erlang C gives %.4f", workers, rho, exact)
        .isBetween(exact - tol, exact + tol);
    assertThat(m.utilisation())
        .as("utilisation of M/M/%d at rho %.1f", workers, rho)
        .isBetween(rho * 0.98, rho * 1.02);
    assertThat(m.littleL())
        .as("Little's law: sampled L against lambda W")
        .isBetween(m.littleLambdaW() * 0.99, m.littleLambdaW() * 1.01);
  }

  @Test
  void erlangCIsRightForKnownValues() {
    // M/M/1: the probability of waiting is rho, the mean wait rho / (mu - lambda).
    assertThat(erlangC(1, 0.8)).isBetween(0.8 - 1e-12, 0.8 + 1e-12);
    assertThat(meanWaitMs(1, 0.9)).isBetween(9.0 - 1e-9, 9.0 + 1e-9);
    // A textbook value: c = 2, a = 1 gives C = 1/3.
    assertThat(erlangC(2, 1.0)).isBetween(1.0 / 3 - 1e-12, 1.0 / 3 + 1e-12);
  }

  @Test
  void aFullQueueRefusesAndAnMm1kLosesWhatTheoryLoses() {
    // M/M/1/K with K = 1 + queue places: the blocking probability is (1 − ρ) ρ^K / (1 − ρ^(K+1)).
    int queue = 4;
    double rho = 0.9;
    int k = queue + 1;
    double blocking = (1 - rho) * Math.pow(rho, k) / (1 - Math.pow(rho, k + 1));
    SimRandom random = new SimRandom(5);
    OriginPhase exp =
        new OriginPhase(
            "m", 10_000, SERVICE_MS, 0, 0, 0, false, OriginPhase.Distribution.EXPONENTIAL);
    Origin origin =
        new Origin(List.of(exp), new OriginCapacity(1, queue, false), 5, random, 10_000, TICK);
    SimRandom arrivals = new SimRandom(99);
    long now = 0;
    int refused = 0;
    int n = 1_000_000;
    for (int i = 0; i < n; i++) {
      now += (long) (-Math.log(1.0 - arrivals.nextDouble()) / rho * MS);
      origin.serve(now, 1000 * SECOND);
      if (origin.lastFailure() == Outcome.CONNECT_FAILURE) {
        refused++;
      }
    }
    assertThat((double) refused / n).isBetween(blocking * 0.95, blocking * 1.05);
  }
}
