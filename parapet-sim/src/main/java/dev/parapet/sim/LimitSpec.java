package dev.parapet.sim;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.limit.LimitAlgorithm;
import dev.parapet.core.time.RandomSource;

/**
 * A server's admission control, as the proxy's {@code admission} block: the core's {@link
 * LimitAlgorithm} by name ({@code fixed}, {@code aimd}, {@code vegas}, {@code gradient2}) with its
 * bounds, and a queue of at most {@code queue} requests in front of it (0: refuse when the limit is
 * reached), run by a real {@link AdmissionController} with the proxy's CoDel defaults.
 */
record LimitSpec(String algorithm, int initial, int min, int max, int queue) {
  LimitSpec {
    // Fails with the core's own message on an unknown name or inconsistent bounds.
    LimitAlgorithm.named(algorithm, initial, min, max, RandomSource.seeded(0));
    if (queue < 0) {
      throw new IllegalArgumentException("queue : " + queue + " (expected: >= 0)");
    }
  }

  AdmissionController create(RandomSource random) {
    return new AdmissionController(
        LimitAlgorithm.named(algorithm, initial, min, max, random),
        queue,
        AdmissionController.DEFAULT_TARGET_SOJOURN_NANOS,
        AdmissionController.DEFAULT_INTERVAL_NANOS);
  }

  @Override
  public String toString() {
    return algorithm
        + " "
        + initial
        + " ["
        + min
        + ", "
        + max
        + "]"
        + (queue > 0 ? " queue " + queue : "");
  }
}
