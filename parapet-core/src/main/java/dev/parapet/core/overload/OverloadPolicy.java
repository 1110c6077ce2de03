package dev.parapet.core.overload;

/**
 * Turns overload readings into one {@link OverloadLevel}, after Envoy's overload manager (resource
 * monitors → threshold triggers → actions, seed 003), with hysteresis that Envoy's threshold
 * triggers lack:
 *
 * <ul>
 *   <li><b>Up at once.</b> The level rises as soon as any resource's latest reading reaches the
 *       threshold of a higher level.
 *   <li><b>Down slowly.</b> The level falls only when every reading is below its release point,
 *       {@code threshold × (1 - hysteresis)}, for the current level, and has stayed there for
 *       {@code cooldown}; it then falls to the level the readings still hold (by release points),
 *       and a further fall needs another full cooldown. A reading hovering at a threshold therefore
 *       cannot make actions flap.
 * </ul>
 *
 * <p>The policy is pure: it never reads a clock or the JVM. Samplers ({@link HeapAfterGcSampler},
 * {@link ProcessCpuSampler}, {@link EventLoopLagEstimator}) feed it through {@link
 * #onReading(OverloadResource, double, long)}; a resource without a reading yet (or with NaN) is
 * ignored. Readings come from one sampling thread or several (calls are serialized); {@link
 * #level()} is a volatile read for event loops.
 */
// Ordinals index small fixed arrays: an EnumMap would box every reading.
@SuppressWarnings("EnumOrdinal")
public final class OverloadPolicy {
  private static final OverloadLevel[] LEVELS = OverloadLevel.values();
  private static final OverloadResource[] RESOURCES = OverloadResource.values();

  private final OverloadConfig config;
  private final double[] readings = new double[RESOURCES.length];
  private volatile OverloadLevel level = OverloadLevel.NONE;
  private boolean calm;
  private long calmSinceNanos;

  public OverloadPolicy(OverloadConfig config) {
    this.config = config;
    java.util.Arrays.fill(readings, Double.NaN);
  }

  /** Records the latest reading of {@code resource} and returns the level at {@code nowNanos}. */
  public synchronized OverloadLevel onReading(
      OverloadResource resource, double value, long nowNanos) {
    readings[resource.ordinal()] = value;
    return evaluate(nowNanos);
  }

  /**
   * Re-evaluates the latest readings at {@code nowNanos} (lets a cooldown end without new data).
   */
  public synchronized OverloadLevel evaluate(long nowNanos) {
    OverloadLevel current = level;
    OverloadLevel entered = levelReached(0.0);
    if (entered.compareTo(current) > 0) {
      calm = false;
      level = entered;
      return entered;
    }
    OverloadLevel held = levelReached(config.hysteresis());
    if (held.compareTo(current) >= 0) {
      calm = false;
      return current;
    }
    if (!calm) {
      calm = true;
      calmSinceNanos = nowNanos;
    }
    if (nowNanos - calmSinceNanos >= config.cooldownNanos()) {
      calm = false;
      level = held;
      return held;
    }
    return current;
  }

  /** The current level; cheap, for every request. */
  public OverloadLevel level() {
    return level;
  }

  /** The latest reading of {@code resource}, NaN when none. */
  public synchronized double reading(OverloadResource resource) {
    return readings[resource.ordinal()];
  }

  public OverloadConfig config() {
    return config;
  }

  /** Highest level any reading reaches when thresholds are lowered by {@code band}. */
  private OverloadLevel levelReached(double band) {
    OverloadLevel reached = OverloadLevel.NONE;
    for (OverloadResource r : RESOURCES) {
      double value = readings[r.ordinal()];
      if (Double.isNaN(value)) {
        continue;
      }
      for (int l = LEVELS.length - 1; l > reached.ordinal(); l--) {
        double threshold = config.threshold(r, LEVELS[l]);
        if (!Double.isNaN(threshold) && value >= threshold * (1.0 - band)) {
          reached = LEVELS[l];
          break;
        }
      }
    }
    return reached;
  }
}
