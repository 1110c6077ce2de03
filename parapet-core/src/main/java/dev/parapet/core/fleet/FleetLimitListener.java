package dev.parapet.core.fleet;

/** Told when a {@link FleetLimiter} changes {@link FleetMode}: for logs and metrics. */
@FunctionalInterface
public interface FleetLimitListener {
  /** Ignores every change. */
  FleetLimitListener NONE = (from, to, reason, nowNanos) -> {};

  /**
   * The limiter moved from {@code from} to {@code to} because of {@code reason} (a short sentence
   * for a log line). Called once per change, by the thread that made it; must not block.
   */
  void modeChanged(FleetMode from, FleetMode to, String reason, long nowNanos);
}
