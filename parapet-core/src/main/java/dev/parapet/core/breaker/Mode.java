package dev.parapet.core.breaker;

/** Whether a breaker acts on its decisions. */
public enum Mode {
  /** Rejects calls as decided. */
  ENFORCE,
  /**
   * Decides, records and reports exactly as when enforcing, but rejects nothing (seed 004: "we
   * shadowed our first implementation for two weeks — logging what would have been ejected").
   */
  SHADOW
}
