package dev.parapet.sim;

/**
 * Something that happens at a point of virtual time. Ordered by time, then by the sequence number
 * the {@link Engine} gave it when it was scheduled, so two events at the same nanosecond always run
 * in the order they were scheduled: that tie-break is what makes a run replay byte for byte.
 *
 * <p>An event object may be scheduled again after it has fired (a request reschedules itself for
 * each of its steps), which keeps the hot path free of per-step allocation; it is in the queue at
 * most once at a time.
 */
abstract class SimEvent {
  long at;
  // The engine's index of this event (-1 until first scheduled): its queue holds ids, not objects.
  int id = -1;

  /** Runs the event; the engine's clock already reads {@code nowNanos}. */
  abstract void fire(long nowNanos);

  /**
   * Reads the state {@link #fire} will read, a few events before it fires, so that the cache misses
   * of events in flight overlap; returns anything derived from what it read.
   */
  long touch() {
    return at;
  }
}
