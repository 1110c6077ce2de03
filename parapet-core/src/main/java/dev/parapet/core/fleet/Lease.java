package dev.parapet.core.fleet;

/**
 * What a {@link LeaseSource} answered: tokens taken from the shared bucket for this proxy alone.
 *
 * @param granted tokens granted, {@code >= 0} (fewer than asked when the bucket is low, 0 when it
 *     is empty)
 * @param waitNanos when fewer than asked were granted: how long until the bucket could grant the
 *     rest ({@code >= 0}); the limiter asks again no sooner
 */
public record Lease(int granted, long waitNanos) {
  public Lease {
    if (granted < 0) {
      throw new IllegalArgumentException("granted : " + granted + " (expected: >= 0)");
    }
    if (waitNanos < 0) {
      throw new IllegalArgumentException("waitNanos : " + waitNanos + " (expected: >= 0)");
    }
  }
}
