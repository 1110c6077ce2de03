package dev.parapet.sim;

import dev.parapet.core.time.RandomSource;

/**
 * SplitMix64 on a plain field: the very sequence of the core's {@link RandomSource#seeded(long)}
 * (same gamma, same mix, same 53-bit conversion; {@code SimRandomTest} checks them draw for draw),
 * without its {@code AtomicLong}. The core's source may be shared between threads, so every draw
 * there is a locked read-modify-write; the simulator draws one to three times per simulated request
 * on a single thread, and the locked add was a quarter of the run's CPU time (JFR, fleet-300 at 30
 * PoPs).
 */
final class SimRandom implements RandomSource {
  private static final long GOLDEN_GAMMA = 0x9e3779b97f4a7c15L;
  private static final double DOUBLE_UNIT = 0x1.0p-53;

  private long state;

  SimRandom(long seed) {
    this.state = seed;
  }

  @Override
  public double nextDouble() {
    state += GOLDEN_GAMMA;
    return (mix64(state) >>> 11) * DOUBLE_UNIT;
  }

  /** The same value as {@link RandomSource#nextLong(long)} for a positive bound. */
  int nextInt(int bound) {
    return Math.min((int) (nextDouble() * bound), bound - 1);
  }

  private static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
