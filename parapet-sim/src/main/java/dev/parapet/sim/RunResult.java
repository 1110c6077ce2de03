package dev.parapet.sim;

import dev.parapet.sim.Series.Col;

/**
 * The outcome of one variant's run and the summary numbers derived from its {@link Series}.
 *
 * <p>Phases: the first phase of the timeline is the healthy baseline; with three or more phases the
 * last one is the recovery and the ones between are the fault; with two, the second is the fault.
 * {@code decisions} counts what the core's request sequence decided (retries, hedges, failures).
 */
record RunResult(
    Scenario scenario,
    Variant variant,
    long seed,
    Series series,
    long firstOpenNanos,
    long opens,
    long events,
    Decisions decisions) {

  int phaseStartSecond(int i) {
    return (int) Math.round(scenario.phaseStart(i));
  }

  int phaseEndSecond(int i) {
    return (int) Math.round(scenario.phaseStart(i) + scenario.timeline().get(i).seconds());
  }

  int faultFirstPhase() {
    return Math.min(1, scenario.timeline().size() - 1);
  }

  int faultLastPhase() {
    int n = scenario.timeline().size();
    return n >= 3 ? n - 2 : n - 1;
  }

  boolean hasRecovery() {
    return scenario.timeline().size() >= 3;
  }

  long total(Col c) {
    return series.sum(c, 0, series.seconds());
  }

  long faultTotal(Col c) {
    return series.sum(c, phaseStartSecond(faultFirstPhase()), phaseEndSecond(faultLastPhase()));
  }

  static double ratio(long a, long b) {
    return b == 0 ? 0.0 : (double) a / b;
  }

  /**
   * Origin attempts per request for the sick origin that missed the edge's cache, over the whole
   * run.
   */
  double amplification() {
    return ratio(total(Col.ATTEMPTS), total(Col.SICK_OFFERED) - total(Col.CACHE_HITS));
  }

  /** Origin attempts per cache miss for the sick origin, during the fault phases. */
  double faultAmplification() {
    return ratio(
        faultTotal(Col.ATTEMPTS), faultTotal(Col.SICK_OFFERED) - faultTotal(Col.CACHE_HITS));
  }

  /** Origin attempts per cache miss for the sick origin, during phase {@code i}. */
  double phaseAmplification(int i) {
    int from = phaseStartSecond(i);
    int to = phaseEndSecond(i);
    return ratio(
        series.sum(Col.ATTEMPTS, from, to),
        series.sum(Col.SICK_OFFERED, from, to) - series.sum(Col.CACHE_HITS, from, to));
  }

  double faultAttemptsPerSecond() {
    int secs = phaseEndSecond(faultLastPhase()) - phaseStartSecond(faultFirstPhase());
    return secs <= 0 ? 0 : (double) faultTotal(Col.ATTEMPTS) / secs;
  }

  double successRate() {
    return ratio(total(Col.USER_OK), total(Col.OFFERED));
  }

  double faultSuccessRate() {
    return ratio(faultTotal(Col.USER_OK), faultTotal(Col.OFFERED));
  }

  double healthyRouteSuccessRate() {
    long healthyOffered = total(Col.OFFERED) - total(Col.SICK_OFFERED);
    return healthyOffered == 0 ? Double.NaN : ratio(total(Col.HEALTHY_USER_OK), healthyOffered);
  }

  /** Seconds from the start of the fault to the first breaker opening, or -1 when none opened. */
  double timeToOpenSeconds() {
    return firstOpenNanos < 0 ? -1 : firstOpenNanos / 1e9 - scenario.phaseStart(faultFirstPhase());
  }

  double fastFailShare() {
    return ratio(total(Col.FAST_FAIL), total(Col.SICK_OFFERED));
  }

  /**
   * Seconds from the start of the recovery phase to the first second in which the sick origin's
   * requests succeeded at least 99 % as often as in the second half of the healthy baseline (so a
   * fleet that was saturated before the fault is not held to 100 %); -1 when that never happened
   * within the run (or there is no recovery phase).
   */
  int recoverySeconds() {
    if (!hasRecovery()) {
      return -1;
    }
    double baseline =
        ratio(
            series.sum(Col.SICK_USER_OK, phaseEndSecond(0) / 2, phaseEndSecond(0)),
            series.sum(Col.SICK_OFFERED, phaseEndSecond(0) / 2, phaseEndSecond(0)));
    int from = phaseStartSecond(scenario.timeline().size() - 1);
    for (int s = from; s < series.seconds(); s++) {
      long offered = series.get(s, Col.SICK_OFFERED);
      if (offered > 0 && series.get(s, Col.SICK_USER_OK) >= 0.99 * baseline * offered) {
        return s - from;
      }
    }
    return -1;
  }

  /**
   * The {@code q} quantile of the time from arrival to answer of requests to the origin under test
   * that got a worker (fast fails included), during the fault phases, in milliseconds.
   */
  double faultLatencyMillis(double q) {
    return series.latencyQuantileMillis(
        phaseStartSecond(faultFirstPhase()), phaseEndSecond(faultLastPhase()), q);
  }

  /** The mean of a sampled column (such as {@code LIMIT}) over the fault phases' seconds. */
  double faultMean(Col c) {
    int from = phaseStartSecond(faultFirstPhase());
    int to = phaseEndSecond(faultLastPhase());
    return to - from <= 0 ? 0 : (double) series.sum(c, from, to) / (to - from);
  }

  /** The {@code q} latency quantile over the second half of the healthy baseline (phase 0). */
  double baselineLatencyMillis(double q) {
    return series.latencyQuantileMillis(phaseEndSecond(0) / 2, phaseEndSecond(0), q);
  }

  long maxProbesPerSecond() {
    return series.max(Col.PROBES, 0, series.seconds());
  }

  long peakBusyWorkers() {
    return series.max(Col.BUSY_WORKERS, 0, series.seconds());
  }

  /** Worker-seconds held at tier {@code col} during the fault phases. */
  double faultWorkerSeconds(Col col) {
    return faultTotal(col) / 1000.0;
  }

  /**
   * Requests the servers answered per second in the second half of phase {@code i} (the steady
   * state once the phase's latency has filled the workers): under saturation, the servers'
   * effective capacity (Little's law: workers / mean hold time).
   */
  double steadyRate(Col col, int i) {
    int from = phaseStartSecond(i);
    int to = phaseEndSecond(i);
    int mid = from + (to - from) / 2;
    return to - mid <= 0 ? 0 : (double) series.sum(col, mid, to) / (to - mid);
  }

  /** {@code col} per second over phase {@code i}. */
  double phaseRate(Col col, int i) {
    int from = phaseStartSecond(i);
    int to = phaseEndSecond(i);
    return to - from <= 0 ? 0 : (double) series.sum(col, from, to) / (to - from);
  }

  /**
   * What users of the origin under test saw in phase {@code i}: good answers (from the origin, a
   * fresh cache hit or a stale copy) ÷ their requests.
   */
  double phaseUserSuccess(int i) {
    int from = phaseStartSecond(i);
    int to = phaseEndSecond(i);
    return ratio(series.sum(Col.SICK_USER_OK, from, to), series.sum(Col.SICK_OFFERED, from, to));
  }

  /** Share of the origin's workers busy in phase {@code i}; NaN with unlimited workers. */
  double phaseUtilisation(int i) {
    int workers = scenario.capacity().workers();
    return workers == 0 ? Double.NaN : phaseRate(Col.ORIGIN_BUSY_MS, i) / 1000.0 / workers;
  }

  /** Mean number of attempts in the origin (queued or in service) over phase {@code i}. */
  double phaseInOrigin(int i) {
    return phaseRate(Col.ORIGIN_IN_SAMPLES, i) * scenario.tickMillis() / 1000.0;
  }

  /** Share of the origin's busy worker time in the fault spent on answers no client received. */
  double faultWastedShare() {
    return ratio(faultTotal(Col.ORIGIN_WASTED_MS), faultTotal(Col.ORIGIN_BUSY_MS));
  }

  /**
   * Little's law at the origin over the run: {L, λW}, where L is the mean of the number of attempts
   * in the origin sampled at every tick and λW is the arrival rate of accepted attempts times their
   * mean time in the origin. The two are measured independently; they agree within edge effects
   * (attempts still in the origin when the run ends) and sampling noise.
   */
  double[] littlesLaw() {
    double seconds = series.seconds();
    long accepted = total(Col.ORIGIN_ACCEPTED);
    double l = total(Col.ORIGIN_IN_SAMPLES) * scenario.tickMillis() / 1000.0 / seconds;
    double w = accepted == 0 ? 0 : total(Col.ORIGIN_SOJOURN_MS) / 1000.0 / accepted;
    return new double[] {l, accepted / seconds * w};
  }

  /**
   * What users of the origin under test saw during the fault phases (as {@link #phaseUserSuccess}).
   */
  double faultUserSuccess() {
    return ratio(faultTotal(Col.SICK_USER_OK), faultTotal(Col.SICK_OFFERED));
  }

  /** {@code col} per second over the fault phases. */
  double faultRate(Col col) {
    int secs = phaseEndSecond(faultLastPhase()) - phaseStartSecond(faultFirstPhase());
    return secs <= 0 ? 0 : (double) faultTotal(col) / secs;
  }
}
