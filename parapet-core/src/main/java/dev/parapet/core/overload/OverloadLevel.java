package dev.parapet.core.overload;

/**
 * What the proxy does about overload, in increasing severity; each level includes the ones below it
 * (shedding low priority also disables hedges and retries).
 */
public enum OverloadLevel {
  /** Normal operation. */
  NONE,
  /** No hedged requests and no retries: extra load is the first thing to go. */
  DISABLE_HEDGES_AND_RETRIES,
  /** Also shed low-priority work (priority classes 3 and 4: bots, background, prefetch). */
  SHED_LOW_PRIORITY,
  /** Also stop accepting new requests: readyz false, {@code Connection: close}, 503. */
  STOP_ACCEPTING;

  public boolean disablesHedgesAndRetries() {
    return compareTo(DISABLE_HEDGES_AND_RETRIES) >= 0;
  }

  public boolean shedsLowPriority() {
    return compareTo(SHED_LOW_PRIORITY) >= 0;
  }

  public boolean stopsAccepting() {
    return this == STOP_ACCEPTING;
  }
}
