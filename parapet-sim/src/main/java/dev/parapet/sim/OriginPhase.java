package dev.parapet.sim;

/**
 * One stretch of an origin's fault timeline: how it answers while the phase lasts.
 *
 * @param name shown in the CSV and the summary (healthy, brownout, down, recovery ...)
 * @param seconds how long the phase lasts, > 0
 * @param medianMillis median response latency (latency is log-normal around it)
 * @param sigma log-normal shape; 0 gives a constant latency
 * @param errorRate share of answers that are 503s, in [0, 1]
 * @param hangRate share of attempts the origin never answers (they time out), in [0, 1]
 * @param down connections are refused at once (a hard-down origin)
 */
record OriginPhase(
    String name,
    double seconds,
    double medianMillis,
    double sigma,
    double errorRate,
    double hangRate,
    boolean down) {

  static OriginPhase healthy(String name, double seconds, double medianMillis) {
    return new OriginPhase(name, seconds, medianMillis, 0.3, 0, 0, false);
  }

  static OriginPhase downFor(double seconds) {
    return new OriginPhase("down", seconds, 1, 0, 0, 0, true);
  }
}
