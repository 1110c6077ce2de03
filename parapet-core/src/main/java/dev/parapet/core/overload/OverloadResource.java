package dev.parapet.core.overload;

/** What an overload reading measures. */
public enum OverloadResource {
  /** Heap used after the last collection / maximum heap, in {@code [0, 1]}. */
  HEAP,
  /** Process CPU load over all cores, in {@code [0, 1]}. */
  CPU,
  /** Event-loop lag in nanoseconds (from {@link EventLoopLagEstimator}). */
  EVENT_LOOP_LAG
}
