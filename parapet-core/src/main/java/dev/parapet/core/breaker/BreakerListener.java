package dev.parapet.core.breaker;

/**
 * Receives breaker events on the thread that caused them (only the thread whose state change won is
 * told). Keep it fast and non-blocking: hand work off. An exception thrown here is counted and
 * swallowed, never propagated into the call path.
 */
public interface BreakerListener {

  /** A listener that ignores everything. */
  BreakerListener NONE = new BreakerListener() {};

  /** A state change. */
  default void onTransition(TransitionEvent event) {}

  /** The breaker is flapping. */
  default void onFlapping(FlappingEvent event) {}
}
