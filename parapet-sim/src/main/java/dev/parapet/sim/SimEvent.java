package dev.parapet.sim;

/**
 * Something that happens at a point of virtual time. Ordered by time, then by the sequence number
 * the {@link Engine} gave it when it was scheduled, so two events at the same nanosecond always run
 * in the order they were scheduled: that tie-break is what makes a run replay byte for byte.
 *
 * <p>An event object may be scheduled again after it has fired (a request reschedules itself for
 * each of its steps), which keeps the hot path free of per-step allocation.
 */
abstract class SimEvent implements Comparable<SimEvent> {
  long at;
  long seq;

  /** Runs the event; the engine's ticker already reads {@code nowNanos}. */
  abstract void fire(long nowNanos);

  @Override
  public final int compareTo(SimEvent o) {
    // Virtual time starts at 0 and never approaches Long.MAX_VALUE, but compare by subtraction as
    // every nanoTime comparison in Parapet does.
    long d = at - o.at;
    if (d != 0) {
      return d < 0 ? -1 : 1;
    }
    return Long.compare(seq, o.seq);
  }
}
