package dev.parapet.sim;

/**
 * One stretch of an origin's fault timeline: how it answers while the phase lasts.
 *
 * <p>The phase's service time is how long one attempt keeps one of the origin's workers busy (with
 * unlimited workers, simply its latency), drawn from {@code distribution}: log-normal around {@code
 * medianMillis} with shape {@code sigma}, exponential with mean {@code medianMillis}, or fixed at
 * {@code medianMillis}.
 *
 * @param name shown in the CSV and the summary (healthy, brownout, down, recovery ...)
 * @param seconds how long the phase lasts, > 0
 * @param medianMillis the log-normal median, the exponential mean or the fixed service time
 * @param sigma log-normal shape; 0 gives a constant latency (ignored by the other distributions)
 * @param errorRate share of answers that are 503s, in [0, 1]
 * @param hangRate share of attempts the origin never answers (they time out), in [0, 1]
 * @param down connections are refused at once (a hard-down origin)
 * @param distribution how service times are drawn
 */
record OriginPhase(
    String name,
    double seconds,
    double medianMillis,
    double sigma,
    double errorRate,
    double hangRate,
    boolean down,
    Distribution distribution) {

  /** The service-time distributions an origin phase can draw from. */
  enum Distribution {
    LOGNORMAL,
    EXPONENTIAL,
    FIXED
  }

  OriginPhase(
      String name,
      double seconds,
      double medianMillis,
      double sigma,
      double errorRate,
      double hangRate,
      boolean down) {
    this(name, seconds, medianMillis, sigma, errorRate, hangRate, down, Distribution.LOGNORMAL);
  }

  static OriginPhase healthy(String name, double seconds, double medianMillis) {
    return new OriginPhase(name, seconds, medianMillis, 0.3, 0, 0, false);
  }

  static OriginPhase downFor(double seconds) {
    return new OriginPhase("down", seconds, 1, 0, 0, 0, true);
  }

  /** The mean service time in milliseconds (log-normal: median × e^(σ²/2)). */
  double meanMillis() {
    return switch (distribution) {
      case LOGNORMAL -> medianMillis * Math.exp(sigma * sigma / 2);
      case EXPONENTIAL, FIXED -> medianMillis;
    };
  }
}
