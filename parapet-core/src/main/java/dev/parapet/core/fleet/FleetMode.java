package dev.parapet.core.fleet;

/** Where a {@link FleetLimiter} takes its tokens from. */
public enum FleetMode {
  /** From leases of the fleet's shared bucket: the fleet as a whole stays within the ceiling. */
  SHARED,
  /**
   * From a local bucket of {@code rate / instances}: the shared bucket was slow or failed, so each
   * proxy keeps to its share of the ceiling until the shared bucket answers in time again.
   */
  LOCAL_FALLBACK
}
