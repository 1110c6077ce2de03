package dev.parapet.sim.replay;

import dev.parapet.core.breaker.BreakerPolicy;
import java.util.List;

/** What one policy would have done, per route (sorted by name) and in total. */
public record PolicyResult(String name, BreakerPolicy policy, List<RouteResult> routes) {
  public long requests() {
    return routes.stream().mapToLong(r -> r.requests).sum();
  }

  public long wouldReject() {
    return routes.stream().mapToLong(r -> r.wouldReject).sum();
  }

  public long rejectedInTrouble() {
    return routes.stream().mapToLong(r -> r.rejectedInTrouble).sum();
  }

  public long rejectedHealthy() {
    return routes.stream().mapToLong(r -> r.rejectedHealthy).sum();
  }

  public long troubleRequests() {
    return routes.stream().mapToLong(r -> r.troubleRequests).sum();
  }

  public long opens() {
    return routes.stream().mapToLong(r -> r.opens).sum();
  }

  public long reopens() {
    return routes.stream().mapToLong(r -> r.reopens).sum();
  }

  public long falseOpens() {
    return routes.stream().mapToLong(r -> r.falseOpens).sum();
  }

  public long flappingAlerts() {
    return routes.stream().mapToLong(r -> r.flappingAlerts).sum();
  }

  public long episodes() {
    return routes.stream().mapToLong(r -> r.episodes).sum();
  }

  public long detected() {
    return routes.stream().mapToLong(r -> r.detected).sum();
  }

  /** Earliest opening on any route, nanoseconds from the first record, or -1. */
  public long firstOpenNanos() {
    return routes.stream().mapToLong(r -> r.firstOpenNanos).filter(t -> t >= 0).min().orElse(-1);
  }

  /** Mean time from the start of a trouble episode to the opening, over detected episodes; -1. */
  public long meanTimeToOpenNanos() {
    long d = detected();
    return d == 0 ? -1 : routes.stream().mapToLong(r -> r.timeToOpenSumNanos).sum() / d;
  }

  public long maxTimeToOpenNanos() {
    return detected() == 0
        ? -1
        : routes.stream().mapToLong(r -> r.timeToOpenMaxNanos).max().orElse(-1);
  }

  public RouteResult route(String name) {
    for (RouteResult r : routes) {
      if (r.route.equals(name)) {
        return r;
      }
    }
    throw new IllegalArgumentException("route : " + name + " (expected: one of the log's)");
  }
}
