package dev.parapet.core.breaker;

/** Where half-open probes come from. */
public enum ProbeMode {
  /** Real requests are the probes (seed 002: the most representative recovery signal). */
  LIVE,
  /**
   * A prober sends synthetic requests (seed 004: "send just one synthetic probe request, not live
   * user traffic") through {@link CircuitBreaker#tryAcquireProbe}; live calls are rejected until
   * the breaker ramps.
   */
  SYNTHETIC
}
