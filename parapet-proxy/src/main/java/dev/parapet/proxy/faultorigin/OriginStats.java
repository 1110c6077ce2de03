package dev.parapet.proxy.faultorigin;

import java.util.EnumMap;
import java.util.Map;

/**
 * Counters since start or the last reset, as one snapshot.
 *
 * @param connections connections accepted
 * @param requests requests received, health checks included
 * @param healthChecks {@code GET /healthz} requests among them
 * @param outcomes requests by what the origin did with them
 */
public record OriginStats(
    long connections, long requests, long healthChecks, Map<FaultOutcome, Long> outcomes) {

  public OriginStats {
    EnumMap<FaultOutcome, Long> all = new EnumMap<>(FaultOutcome.class);
    for (FaultOutcome o : FaultOutcome.values()) {
      all.put(o, outcomes.getOrDefault(o, 0L));
    }
    outcomes = java.util.Collections.unmodifiableMap(all);
  }

  /** Requests that ended with {@code outcome}. */
  public long count(FaultOutcome outcome) {
    return outcomes.getOrDefault(outcome, 0L);
  }

  /** Requests other than health checks: what a breaker test counts as "calls to the origin". */
  public long trafficRequests() {
    return requests - healthChecks;
  }
}
