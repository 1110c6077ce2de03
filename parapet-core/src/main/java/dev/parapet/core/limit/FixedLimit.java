package dev.parapet.core.limit;

/** A limit that never moves: samples are accepted and ignored. Use it for a hard ceiling. */
public final class FixedLimit implements LimitAlgorithm {
  private final int limit;

  private FixedLimit(int limit) {
    this.limit = limit;
  }

  /** A fixed limit of {@code limit} concurrent requests. */
  public static FixedLimit of(int limit) {
    Limits.checkPositive("limit", limit);
    return new FixedLimit(limit);
  }

  @Override
  public int limit() {
    return limit;
  }

  @Override
  public int onSample(long startNanos, long rttNanos, int inflight, boolean dropped) {
    return limit;
  }

  @Override
  public String toString() {
    return "FixedLimit[" + limit + "]";
  }
}
