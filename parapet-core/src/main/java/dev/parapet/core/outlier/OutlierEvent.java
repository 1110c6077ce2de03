package dev.parapet.core.outlier;

/**
 * One change in a pool's ejection state, delivered to an {@link OutlierListener}.
 *
 * @param kind what happened
 * @param host index of the host in the pool's host list
 * @param reason the rule that fired ({@link EjectionReason#RETURNED} for returns)
 * @param ejectionMultiplier the host's multiplier after the event (ejection time = base ×
 *     multiplier)
 * @param durationNanos the ejection's length for {@link Kind#EJECTED}, else 0
 * @param ejectedHosts hosts ejected in the pool after the event
 * @param hostCount hosts in the pool
 * @param nowNanos time of the event
 */
public record OutlierEvent(
    Kind kind,
    int host,
    EjectionReason reason,
    int ejectionMultiplier,
    long durationNanos,
    int ejectedHosts,
    int hostCount,
    long nowNanos) {

  /** The kinds of events. */
  public enum Kind {
    /** The host was ejected and gets no traffic until its time is up. */
    EJECTED,
    /** A rule fired but ejecting would exceed {@code max_ejected}; the host keeps its traffic. */
    EJECTION_SKIPPED,
    /** The host's ejection ended; balancers may now slow-start it. */
    RETURNED
  }
}
