package dev.parapet.core.window;

import dev.parapet.core.outcome.Outcome;

/**
 * Three 21-bit counters (calls, failures, slow calls) in one {@code long}, so one atomic add
 * records an outcome. Each field holds up to {@link #SATURATION} before recording stops adding: two
 * million calls per bucket (20 million per second with 100 ms buckets), far beyond one origin.
 */
final class Packed {
  static final int BITS = 21;
  static final long MASK = (1L << BITS) - 1;

  /** Leaves room for concurrent adders that passed the check at the same time. */
  static final long SATURATION = MASK - (1L << 16);

  static final long SUCCESS = 1L;
  static final long FAILURE = 1L | (1L << BITS);
  static final long SLOW = 1L | (1L << (2 * BITS));

  private Packed() {}

  static long delta(Outcome.Kind kind) {
    return switch (kind) {
      case SUCCESS -> SUCCESS;
      case FAILURE -> FAILURE;
      case SLOW -> SLOW;
      case IGNORED -> 0L;
    };
  }

  /** Packs three counts, each clamped to the field's maximum. */
  static long of(long calls, long failures, long slowCalls) {
    return Math.min(calls, MASK)
        | (Math.min(failures, MASK) << BITS)
        | (Math.min(slowCalls, MASK) << (2 * BITS));
  }

  static long calls(long packed) {
    return packed & MASK;
  }

  static long failures(long packed) {
    return (packed >>> BITS) & MASK;
  }

  static long slowCalls(long packed) {
    return (packed >>> (2 * BITS)) & MASK;
  }
}
