package dev.parapet.core.time;

/**
 * A monotonic source of nanoseconds, injected at the edge of the system.
 *
 * <p>Policies in parapet-core never read a clock: they take {@code long nowNanos} as an argument.
 * Whoever drives them (the proxy, the simulator, a test) reads one {@code Ticker} and passes the
 * value in, so the same code runs in production, in virtual time and under a {@link ManualTicker}.
 *
 * <p>Values are only meaningful relative to each other and may wrap around {@link Long#MAX_VALUE}:
 * compare them by subtraction ({@code a - b < 0}), never with {@code a < b}.
 */
@FunctionalInterface
public interface Ticker {

  /** Returns the current reading in nanoseconds. */
  long read();

  /** The process-wide monotonic clock ({@link System#nanoTime()}). */
  static Ticker system() {
    return SystemTicker.INSTANCE;
  }
}
