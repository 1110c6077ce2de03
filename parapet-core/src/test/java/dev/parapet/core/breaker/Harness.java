package dev.parapet.core.breaker;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.RandomSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A breaker on a manual ticker with its events recorded; one test's world. */
final class Harness implements BreakerListener {
  static final long MS = 1_000_000L;
  static final long S = 1_000 * MS;
  static final BreakerKey KEY = BreakerKey.of(Scope.ROUTE, "/api/");

  final ManualTicker ticker;
  final CircuitBreaker breaker;
  final List<TransitionEvent> events = new CopyOnWriteArrayList<>();
  final List<FlappingEvent> flapping = new CopyOnWriteArrayList<>();
  long nextRequestId = 1;

  Harness(BreakerPolicy policy) {
    this(policy, 0L, 42L);
  }

  Harness(BreakerPolicy policy, long start, long seed) {
    this.ticker = new ManualTicker(start);
    this.breaker = new CircuitBreaker(KEY, policy, RandomSource.seeded(seed), this, start);
  }

  @Override
  public void onTransition(TransitionEvent event) {
    events.add(event);
  }

  @Override
  public void onFlapping(FlappingEvent event) {
    flapping.add(event);
  }

  long now() {
    return ticker.read();
  }

  void advanceMillis(long ms) {
    ticker.advanceMillis(ms);
  }

  Decision acquire(Permit p) {
    return breaker.tryAcquire(p.requestId(nextRequestId++), now());
  }

  /** Acquires and, when admitted, completes at once with {@code outcome}. */
  Decision call(Outcome outcome) {
    Permit p = new Permit();
    Decision d = acquire(p);
    if (d.isPermitted()) {
      p.onOutcome(outcome, now());
    }
    return d;
  }

  /** {@code n} calls with {@code outcome}; returns how many were admitted. */
  int calls(int n, Outcome outcome) {
    int admitted = 0;
    for (int i = 0; i < n; i++) {
      if (call(outcome).isPermitted()) {
        admitted++;
      }
    }
    return admitted;
  }

  TransitionEvent last() {
    return events.get(events.size() - 1);
  }

  List<State> path() {
    List<State> states = new ArrayList<>();
    for (TransitionEvent e : events) {
      if (states.isEmpty()) {
        states.add(e.from());
      }
      states.add(e.to());
    }
    return states;
  }

  /** Trips a CLOSED breaker with connect failures (no volume needed). */
  void tripWithConnectFailures() {
    calls(3, Outcome.CONNECT_FAILURE);
  }

  static BreakerPolicy.Builder noJitter() {
    return BreakerPolicy.builder()
        .open(java.time.Duration.ofSeconds(30), java.time.Duration.ofMinutes(5), 0.0);
  }
}
