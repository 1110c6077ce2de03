package dev.parapet.core.time;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Ticker} that moves only when told to: for tests, simulations and replays.
 *
 * <p>It may start anywhere, including just below {@link Long#MAX_VALUE}, so that code under test
 * proves it compares readings by subtraction and survives the wrap-around.
 */
public final class ManualTicker implements Ticker {
  private final AtomicLong nanos;

  /** Starts at zero. */
  public ManualTicker() {
    this(0L);
  }

  /** Starts at {@code startNanos}, which may be any value (wrap-around tests start near MAX). */
  public ManualTicker(long startNanos) {
    this.nanos = new AtomicLong(startNanos);
  }

  @Override
  public long read() {
    return nanos.get();
  }

  /** Moves time forward by {@code nanos} (overflow wraps, like {@link System#nanoTime()}). */
  public ManualTicker advance(long nanos) {
    if (nanos < 0) {
      throw new IllegalArgumentException("nanos : " + nanos + " (expected: >= 0)");
    }
    this.nanos.addAndGet(nanos);
    return this;
  }

  /** Moves time forward by {@code duration}. */
  public ManualTicker advance(Duration duration) {
    return advance(duration.toNanos());
  }

  /** Moves time forward by {@code millis} milliseconds. */
  public ManualTicker advanceMillis(long millis) {
    return advance(Math.multiplyExact(millis, 1_000_000L));
  }

  /** Sets the reading; for tests that need a particular start point. */
  public void set(long nanos) {
    this.nanos.set(nanos);
  }
}
