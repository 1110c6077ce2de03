package dev.parapet.proxy.faultorigin;

import java.util.EnumMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The origin's counters, updated from every event loop without locks. A reset swaps in a fresh set
 * of adders, so it is atomic: an increment racing with it lands either before or after, never half.
 */
final class OriginCounters {
  private volatile Tally current = new Tally();

  void connection() {
    current.connections.increment();
  }

  void request(boolean healthCheck) {
    Tally t = current;
    t.requests.increment();
    if (healthCheck) {
      t.healthChecks.increment();
    }
  }

  void outcome(FaultOutcome outcome) {
    current.outcomes[outcome.ordinal()].increment();
  }

  void reset() {
    current = new Tally();
  }

  OriginStats snapshot() {
    Tally t = current;
    EnumMap<FaultOutcome, Long> outcomes = new EnumMap<>(FaultOutcome.class);
    for (FaultOutcome o : FaultOutcome.values()) {
      outcomes.put(o, t.outcomes[o.ordinal()].sum());
    }
    return new OriginStats(t.connections.sum(), t.requests.sum(), t.healthChecks.sum(), outcomes);
  }

  private static final class Tally {
    final LongAdder connections = new LongAdder();
    final LongAdder requests = new LongAdder();
    final LongAdder healthChecks = new LongAdder();
    final LongAdder[] outcomes = new LongAdder[FaultOutcome.values().length];

    Tally() {
      for (int i = 0; i < outcomes.length; i++) {
        outcomes[i] = new LongAdder();
      }
    }
  }
}
