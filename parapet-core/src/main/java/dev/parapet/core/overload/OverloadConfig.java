package dev.parapet.core.overload;

import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.Arrays;

/**
 * Thresholds of the {@link OverloadPolicy}: for each {@link OverloadResource}, the reading at which
 * each {@link OverloadLevel} starts (unset levels never trigger from that resource), plus the
 * hysteresis that keeps actions from flapping. Immutable; {@code with...} returns a copy.
 */
// Ordinals index small fixed arrays: an EnumMap would box every threshold and reading.
@SuppressWarnings("EnumOrdinal")
public final class OverloadConfig {
  /** Default relative release band: an action ends only below 95 % of its threshold. */
  public static final double DEFAULT_HYSTERESIS = 0.05;

  /**
   * Default calm time: readings must stay below the release point this long before stepping down.
   */
  public static final Duration DEFAULT_COOLDOWN = Duration.ofSeconds(5);

  private static final int LEVELS = OverloadLevel.values().length;
  private static final int RESOURCES = OverloadResource.values().length;

  // thresholds[resource][level]; NaN = not configured. Column NONE is unused.
  private final double[][] thresholds;
  private final double hysteresis;
  private final long cooldownNanos;

  private OverloadConfig(double[][] thresholds, double hysteresis, long cooldownNanos) {
    this.thresholds = thresholds;
    this.hysteresis = hysteresis;
    this.cooldownNanos = cooldownNanos;
  }

  /** No thresholds at all: the level stays {@link OverloadLevel#NONE}. */
  public static OverloadConfig none() {
    double[][] t = new double[RESOURCES][LEVELS];
    for (double[] row : t) {
      Arrays.fill(row, Double.NaN);
    }
    return new OverloadConfig(t, DEFAULT_HYSTERESIS, DEFAULT_COOLDOWN.toNanos());
  }

  /**
   * DESIGN.md defaults, {@code overload: {heap: {shed_low: 0.85, stop_accepting: 0.95}, cpu:
   * {shed_low: 0.75}}}; event-loop lag has no default threshold.
   */
  public static OverloadConfig defaults() {
    return none()
        .with(OverloadResource.HEAP, OverloadLevel.SHED_LOW_PRIORITY, 0.85)
        .with(OverloadResource.HEAP, OverloadLevel.STOP_ACCEPTING, 0.95)
        .with(OverloadResource.CPU, OverloadLevel.SHED_LOW_PRIORITY, 0.75);
  }

  /**
   * Sets the reading of {@code resource} at which {@code level} starts. A ratio for heap and CPU in
   * {@code (0, 1]}, nanoseconds for event-loop lag; NaN removes the threshold. A higher level must
   * not have a lower threshold than a lower level of the same resource.
   */
  public OverloadConfig with(OverloadResource resource, OverloadLevel level, double threshold) {
    String path = "overload." + name(resource) + "." + name(level);
    if (level == OverloadLevel.NONE) {
      throw new IllegalArgumentException(path + " : " + threshold + " (expected: a level > none)");
    }
    if (!Double.isNaN(threshold)) {
      boolean ratio = resource != OverloadResource.EVENT_LOOP_LAG;
      if (ratio ? !(threshold > 0.0 && threshold <= 1.0) : !(threshold > 0.0)) {
        throw new IllegalArgumentException(
            path + " : " + threshold + (ratio ? " (expected: in (0, 1])" : " (expected: > 0)"));
      }
    }
    double[][] t = copy();
    t[resource.ordinal()][level.ordinal()] = threshold;
    double previous = Double.NEGATIVE_INFINITY;
    for (int l = 1; l < LEVELS; l++) {
      double v = t[resource.ordinal()][l];
      if (Double.isNaN(v)) {
        continue;
      }
      if (v < previous) {
        throw new IllegalArgumentException(
            path
                + " : "
                + threshold
                + " (expected: thresholds of "
                + name(resource)
                + " not decreasing with severity)");
      }
      previous = v;
    }
    return new OverloadConfig(t, hysteresis, cooldownNanos);
  }

  /** Sets an event-loop lag threshold. */
  public OverloadConfig withLag(OverloadLevel level, Duration lag) {
    return with(
        OverloadResource.EVENT_LOOP_LAG,
        level,
        (double) Durations.positiveNanos("overload.event_loop_lag." + name(level), lag));
  }

  /**
   * Sets the release band: an action ends only once readings are below {@code threshold × (1 -
   * hysteresis)}; {@code hysteresis} in {@code [0, 1)}.
   */
  public OverloadConfig withHysteresis(double hysteresis, Duration cooldown) {
    if (!(hysteresis >= 0.0 && hysteresis < 1.0)) {
      throw new IllegalArgumentException(
          "overload.hysteresis : " + hysteresis + " (expected: in [0, 1))");
    }
    return new OverloadConfig(
        copy(), hysteresis, Durations.nonNegativeNanos("overload.cooldown", cooldown));
  }

  /** The threshold of {@code level} for {@code resource}, or NaN when unset. */
  public double threshold(OverloadResource resource, OverloadLevel level) {
    return thresholds[resource.ordinal()][level.ordinal()];
  }

  public double hysteresis() {
    return hysteresis;
  }

  public long cooldownNanos() {
    return cooldownNanos;
  }

  private double[][] copy() {
    double[][] t = new double[RESOURCES][];
    for (int r = 0; r < RESOURCES; r++) {
      t[r] = thresholds[r].clone();
    }
    return t;
  }

  static String name(OverloadLevel level) {
    return switch (level) {
      case NONE -> "none";
      case DISABLE_HEDGES_AND_RETRIES -> "disable_extra";
      case SHED_LOW_PRIORITY -> "shed_low";
      case STOP_ACCEPTING -> "stop_accepting";
    };
  }

  static String name(OverloadResource resource) {
    return switch (resource) {
      case HEAP -> "heap";
      case CPU -> "cpu";
      case EVENT_LOOP_LAG -> "event_loop_lag";
    };
  }

  @Override
  public String toString() {
    return "OverloadConfig"
        + Arrays.deepToString(thresholds)
        + " hysteresis="
        + hysteresis
        + " cooldown="
        + cooldownNanos
        + "ns";
  }
}
