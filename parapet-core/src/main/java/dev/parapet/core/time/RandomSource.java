package dev.parapet.core.time;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Injected randomness (jitter, sampling). Policies never create their own random generator, so a
 * seeded source replays a test or a simulation exactly.
 *
 * <p>Implementations must be safe to call from many threads.
 */
@FunctionalInterface
public interface RandomSource {

  /** Returns a uniformly distributed value in {@code [0, 1)}. */
  double nextDouble();

  /**
   * Returns a uniformly distributed value in {@code [0, bound)}; {@code bound} must be positive.
   */
  default long nextLong(long bound) {
    if (bound <= 0) {
      throw new IllegalArgumentException("bound : " + bound + " (expected: > 0)");
    }
    long r = (long) (nextDouble() * bound);
    return Math.min(r, bound - 1);
  }

  /** Unseeded, contention-free randomness for production ({@link ThreadLocalRandom}). */
  static RandomSource threadLocal() {
    return () -> ThreadLocalRandom.current().nextDouble();
  }

  /**
   * A deterministic, thread-safe source: the same seed gives the same sequence when called from one
   * thread. SplitMix64 over an atomic counter, so concurrent callers never corrupt the state.
   */
  static RandomSource seeded(long seed) {
    return new SplitMixRandom(seed);
  }
}
