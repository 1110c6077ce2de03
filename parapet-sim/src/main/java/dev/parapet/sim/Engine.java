package dev.parapet.sim;

import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.RandomSource;
import java.util.PriorityQueue;

/**
 * The discrete-event loop. A priority queue of {@link SimEvent}s keyed by (time, sequence number);
 * the loop pops the earliest, moves the {@link ManualTicker} to its time and fires it. Nothing
 * reads a wall clock and all randomness comes from one seeded {@link RandomSource} consumed in
 * event order, so the same seed gives the same run, byte for byte (the core's policies take {@code
 * nowNanos} and an injected random source for exactly this reason: DESIGN "the simulator and the
 * tests drive the very code that runs in production").
 */
final class Engine {
  private final PriorityQueue<SimEvent> queue = new PriorityQueue<>(4096);
  private final ManualTicker ticker = new ManualTicker();
  private final RandomSource random;
  private long nextSeq;
  private long fired;
  private double spareGaussian;
  private boolean hasSpareGaussian;

  Engine(long seed) {
    this.random = RandomSource.seeded(seed);
  }

  RandomSource random() {
    return random;
  }

  long now() {
    return ticker.read();
  }

  long firedCount() {
    return fired;
  }

  /** Schedules {@code event} at {@code atNanos} (not before now). */
  void schedule(SimEvent event, long atNanos) {
    long now = ticker.read();
    event.at = atNanos - now < 0 ? now : atNanos;
    event.seq = nextSeq++;
    queue.add(event);
  }

  /** Fires events in order until the queue is empty or the next one is after {@code endNanos}. */
  void runUntil(long endNanos) {
    while (true) {
      SimEvent e = queue.peek();
      if (e == null || e.at - endNanos > 0) {
        break;
      }
      queue.poll();
      long now = ticker.read();
      if (e.at - now > 0) {
        ticker.advance(e.at - now);
      }
      fired++;
      e.fire(e.at);
    }
    long now = ticker.read();
    if (endNanos - now > 0) {
      ticker.advance(endNanos - now);
    }
  }

  /**
   * A standard normal deviate from the engine's random source: Box–Muller, whose two outputs per
   * pair of uniforms are both used (the second is kept for the next call).
   */
  double nextGaussian() {
    if (hasSpareGaussian) {
      hasSpareGaussian = false;
      return spareGaussian;
    }
    double u1 = random.nextDouble();
    double u2 = random.nextDouble();
    double r = Math.sqrt(-2.0 * Math.log(1.0 - u1));
    double a = 2.0 * Math.PI * u2;
    spareGaussian = r * Math.sin(a);
    hasSpareGaussian = true;
    return r * Math.cos(a);
  }
}
