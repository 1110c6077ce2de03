package dev.parapet.core.fleet;

import dev.parapet.core.time.ManualTicker;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A shared token bucket in virtual time, as Redis's script keeps it (refill at the rate, capped at
 * the burst, partial grants), whose answers come back after a chosen latency or fail: the tests
 * complete them by moving time with {@link #advanceTo}.
 */
final class FakeLeaseSource implements LeaseSource {
  private final ManualTicker ticker;
  private final double ratePerSecond;
  private final double burst;
  private double tokens;
  private long last;
  private final List<Pending> pending = new ArrayList<>();

  long latencyNanos = 200_000;
  boolean failing;
  int asked;
  long given;

  private record Pending(long dueAt, CompletableFuture<Lease> future, Lease lease, boolean fail) {}

  FakeLeaseSource(ManualTicker ticker, double ratePerSecond, int burst) {
    this.ticker = ticker;
    this.ratePerSecond = ratePerSecond;
    this.burst = burst;
    this.tokens = burst;
    this.last = ticker.read();
  }

  @Override
  public synchronized CompletionStage<Lease> lease(int want) {
    asked++;
    long now = ticker.read();
    CompletableFuture<Lease> f = new CompletableFuture<>();
    if (failing) {
      pending.add(new Pending(now + latencyNanos, f, new Lease(0, 0), true));
      return f;
    }
    tokens = Math.min(burst, tokens + (now - last) / 1e9 * ratePerSecond);
    last = now;
    int granted = (int) Math.min(want, Math.floor(tokens));
    tokens -= granted;
    given += granted;
    long wait =
        granted < want ? (long) Math.ceil((want - granted - tokens) / ratePerSecond * 1e9) : 0;
    pending.add(new Pending(now + latencyNanos, f, new Lease(granted, Math.max(0, wait)), false));
    return f;
  }

  /** Moves time to {@code at}, answering every lease due by then in order. */
  void advanceTo(long at) {
    while (true) {
      Pending next;
      synchronized (this) {
        next =
            pending.stream()
                .filter(p -> p.dueAt - at <= 0)
                .min(Comparator.comparingLong(p -> p.dueAt - at))
                .orElse(null);
        if (next == null) {
          break;
        }
        pending.remove(next);
      }
      if (next.dueAt - ticker.read() > 0) {
        ticker.set(next.dueAt);
      }
      if (next.fail) {
        next.future.completeExceptionally(new IllegalStateException("connection refused"));
      } else {
        next.future.complete(next.lease);
      }
    }
    if (at - ticker.read() > 0) {
      ticker.set(at);
    }
  }

  void advance(long nanos) {
    advanceTo(ticker.read() + nanos);
  }

  synchronized int pending() {
    return pending.size();
  }
}
