package dev.parapet.sim.replay;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One replay: each policy's results, the traffic per route, what was read and skipped, and what the
 * replay retained at most (the window and the calls in flight, bounded by rate, not length).
 */
public record ReplayResult(
    List<PolicyResult> policies,
    List<Traffic> traffic,
    long lines,
    long records,
    long badLines,
    long late,
    long outOfRange,
    List<String> badExamples,
    @Nullable String firstLate,
    long firstStartEpochNanos,
    long lastStartNanos,
    int maxWindowRecords,
    int windowCapacity,
    int maxInFlight,
    int inFlightCapacity) {

  /** Requests and failures per bin of one route, from the log alone. */
  public record Traffic(String route, Bins requests, Bins failures) {}

  /** The common bin width of every series of this replay (a power of two seconds). */
  public long binNanos() {
    long w = Scan.NANOS_PER_SECOND;
    for (Traffic t : traffic) {
      w = Math.max(w, Math.max(t.requests.binNanos(), t.failures.binNanos()));
    }
    for (PolicyResult p : policies) {
      for (RouteResult r : p.routes()) {
        w = Math.max(w, r.rejects.binNanos());
      }
    }
    return w;
  }

  /** Bins from the first record to the last at {@link #binNanos()}. */
  public int bins() {
    return (int) (lastStartNanos / binNanos()) + 1;
  }

  /** {@code b} at the common width. */
  public long[] series(Bins b) {
    return b.values(binNanos(), bins());
  }

  public Traffic traffic(String route) {
    for (Traffic t : traffic) {
      if (t.route.equals(route)) {
        return t;
      }
    }
    throw new IllegalArgumentException("route : " + route + " (expected: one of the log's)");
  }
}
