package dev.parapet.core.balance;

import dev.parapet.core.time.Durations;
import java.time.Duration;

/**
 * Slow start after a host returns to service: its weight ramps linearly from {@code minFraction} of
 * the full weight to the full weight over {@code window}. Envoy's {@code slow_start_config} with
 * {@code aggression = 1}, except that the ramp starts at the floor instead of being clamped to it,
 * so the weight grows from the first moment rather than staying flat at the floor for a while.
 *
 * @param windowNanos length of the ramp; 0 disables slow start
 * @param minFraction weight fraction right after the return, in {@code (0, 1]}
 */
public record SlowStart(long windowNanos, double minFraction) {

  /** No slow start: a returning host gets its full weight at once. */
  public static final SlowStart NONE = new SlowStart(0L, 1.0);

  /** Default floor, Envoy's {@code min_weight_percent} of 10 %. */
  public static final double DEFAULT_MIN_FRACTION = 0.1;

  public SlowStart {
    if (windowNanos < 0) {
      throw new IllegalArgumentException("windowNanos : " + windowNanos + " (expected: >= 0)");
    }
    if (!(minFraction > 0.0 && minFraction <= 1.0)) {
      throw new IllegalArgumentException("minFraction : " + minFraction + " (expected: in (0, 1])");
    }
  }

  /** Ramp over {@code window} (DESIGN default {@code slow_start: 30s}) from 10 %. */
  public static SlowStart of(Duration window) {
    return new SlowStart(Durations.nonNegativeNanos("slow_start", window), DEFAULT_MIN_FRACTION);
  }

  /** Weight multiplier in {@code [minFraction, 1]} for {@code host} at {@code nowNanos}. */
  public double factor(HostHealth health, int host, long nowNanos) {
    if (windowNanos == 0L || !health.hasReturned(host)) {
      return 1.0;
    }
    long elapsed = nowNanos - health.returnedAtNanos(host);
    if (elapsed >= windowNanos) {
      return 1.0;
    }
    if (elapsed <= 0L) {
      return minFraction;
    }
    return minFraction + (1.0 - minFraction) * ((double) elapsed / windowNanos);
  }
}
