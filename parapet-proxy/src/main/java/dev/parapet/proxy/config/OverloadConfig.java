package dev.parapet.proxy.config;

import java.time.Duration;

/**
 * Overload manager thresholds ({@code overload:}): heap and CPU as fractions of the resource, event
 * loop lag as a duration.
 */
public record OverloadConfig(Heap heap, Cpu cpu, EventLoopLag eventLoopLag) {
  public static final OverloadConfig DEFAULTS =
      new OverloadConfig(Heap.DEFAULTS, Cpu.DEFAULTS, EventLoopLag.DEFAULTS);

  /** Heap and CPU thresholds, event loop lag at its defaults. */
  public OverloadConfig(Heap heap, Cpu cpu) {
    this(heap, cpu, EventLoopLag.DEFAULTS);
  }

  /**
   * {@code event_loop_lag:} how late the slowest event loop runs a task scheduled on it (smoothed):
   * the proxy's own saturation, whatever its cause. An addition to DESIGN.md's example, which names
   * the monitor but no keys for it.
   *
   * @param shedLow shed low priority above this; 250 ms
   * @param stopAccepting stop accepting new requests above this; 1 s
   */
  public record EventLoopLag(Duration shedLow, Duration stopAccepting) {
    public static final EventLoopLag DEFAULTS =
        new EventLoopLag(Duration.ofMillis(250), Duration.ofSeconds(1));
  }

  /**
   * {@code heap:} share of the maximum heap in use after GC.
   *
   * @param shedLow shed low priority above this; 0.85
   * @param stopAccepting stop accepting new requests above this; 0.95
   */
  public record Heap(double shedLow, double stopAccepting) {
    public static final Heap DEFAULTS = new Heap(0.85, 0.95);
  }

  /**
   * {@code cpu:} process CPU share.
   *
   * @param shedLow shed low priority above this; 0.75
   */
  public record Cpu(double shedLow) {
    public static final Cpu DEFAULTS = new Cpu(0.75);
  }
}
