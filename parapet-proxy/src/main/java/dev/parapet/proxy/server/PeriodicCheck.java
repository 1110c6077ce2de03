package dev.parapet.proxy.server;

import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One repeating check per connection on its event loop, as the head timers use it instead of a
 * timer per request (Netty's {@code IdleStateHandler} works the same way): a timeout it watches
 * fires up to one period late.
 */
final class PeriodicCheck {
  private final long everyNanos;
  private @Nullable ScheduledFuture<?> future;

  /** Checks every quarter of {@code shortestTimeoutNanos}, at least every second, at most 100/s. */
  PeriodicCheck(long shortestTimeoutNanos) {
    this.everyNanos = Math.max(10_000_000L, Math.min(1_000_000_000L, shortestTimeoutNanos / 4));
  }

  /** Starts running {@code check} on {@code loop}; does nothing when already started. */
  void start(EventExecutor loop, Runnable check) {
    if (future == null) {
      future = loop.scheduleWithFixedDelay(check, everyNanos, everyNanos, TimeUnit.NANOSECONDS);
    }
  }

  boolean started() {
    return future != null;
  }

  void stop() {
    ScheduledFuture<?> f = future;
    if (f != null) {
      f.cancel(false);
      future = null;
    }
  }
}
