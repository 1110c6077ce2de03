package dev.parapet.core.time;

import java.util.concurrent.atomic.AtomicLong;

/**
 * SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014) over
 * an {@link AtomicLong}: each call advances the state by the golden gamma with one atomic add and
 * mixes the result, so the generator is lock-free and deterministic for a single caller.
 * Hand-written because {@link java.util.SplittableRandom} is not thread-safe and {@link
 * java.util.concurrent.ThreadLocalRandom} cannot be seeded.
 */
final class SplitMixRandom implements RandomSource {
  private static final long GOLDEN_GAMMA = 0x9e3779b97f4a7c15L;
  private static final double DOUBLE_UNIT = 0x1.0p-53;

  private final AtomicLong state;

  SplitMixRandom(long seed) {
    this.state = new AtomicLong(seed);
  }

  @Override
  public double nextDouble() {
    return (mix64(state.addAndGet(GOLDEN_GAMMA)) >>> 11) * DOUBLE_UNIT;
  }

  private static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
