package dev.parapet.proxy.config;

/** Overload manager thresholds ({@code overload:}), as fractions of the resource. */
public record OverloadConfig(Heap heap, Cpu cpu) {
  public static final OverloadConfig DEFAULTS = new OverloadConfig(Heap.DEFAULTS, Cpu.DEFAULTS);

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
