package dev.parapet.sim;

import dev.parapet.core.limit.LimitAlgorithm;
import dev.parapet.core.time.RandomSource;

/**
 * A server's concurrency limiter on origin attempts: the core's {@link LimitAlgorithm} by name
 * ({@code fixed}, {@code aimd}, {@code vegas}, {@code gradient2}, as the proxy's {@code
 * admission.limit.algorithm}) with its bounds, run by a real {@code ConcurrencyGate}.
 */
record LimitSpec(String algorithm, int initial, int min, int max) {
  LimitSpec {
    // Fails with the core's own message on an unknown name or inconsistent bounds.
    LimitAlgorithm.named(algorithm, initial, min, max, RandomSource.seeded(0));
  }

  LimitAlgorithm create(RandomSource random) {
    return LimitAlgorithm.named(algorithm, initial, min, max, random);
  }

  @Override
  public String toString() {
    return algorithm + " " + initial + " [" + min + ", " + max + "]";
  }
}
