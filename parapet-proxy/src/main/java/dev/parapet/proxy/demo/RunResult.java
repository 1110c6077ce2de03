package dev.parapet.proxy.demo;

import dev.parapet.core.breaker.Mode;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * What one run of the timeline did, as the summary table shows it.
 *
 * @param label the column's name in the summary
 * @param mode the breakers' mode during the run, or null for a chain without Parapet (nginx)
 * @param offered requests sent (API and static)
 * @param offeredApi API requests sent
 * @param apiAttempts attempts the shield made to the API origin (connection failures included), or
 *     -1 when the shield is not Parapet
 * @param originRequests requests that reached the API origin (counted by the origin itself)
 * @param succeeded answers with a 2xx status (fresh or stale)
 * @param stale of those, answers served stale ({@code Cache-Status: ... stale})
 * @param staticP99Millis p99 latency of the healthy route (/static/), from each request's due time
 * @param staticHealthyP99Millis the same over the requests due in the healthy phase alone: the
 *     baseline the rest of the run is compared with
 * @param statics requests to the healthy route
 * @param staticSucceeded of those, answers with a 2xx status
 * @param apiP50Millis median latency of the API route (/api/), fresh or stale or failed
 * @param apiP99Millis p99 latency of the API route (/api/), fresh or stale or failed
 * @param staleP99Millis p99 latency of the stale answers, or null if there were none
 * @param timeToOpenMillis from the start of the brownout until a breaker on the API route left
 *     CLOSED (in shadow mode: would have opened), or null if none did
 * @param fastFails answers the edge or shield made itself because a breaker was open
 * @param fastFailP99Millis their p99 latency, or null if there were none
 * @param failedHeldSeconds seconds callers spent waiting for answers that were not 2xx: what a
 *     failing dependency costs the callers' own threads and connections
 * @param recoveryMillis from the origin's recovery until the first second in which at least 90 % of
 *     API requests succeeded, or null if that did not happen before the run ended
 */
record RunResult(
    String label,
    @Nullable Mode mode,
    long offered,
    long offeredApi,
    long apiAttempts,
    long originRequests,
    long succeeded,
    long stale,
    double staticP99Millis,
    double staticHealthyP99Millis,
    long statics,
    long staticSucceeded,
    double apiP50Millis,
    double apiP99Millis,
    @Nullable Double staleP99Millis,
    @Nullable Double timeToOpenMillis,
    long fastFails,
    @Nullable Double fastFailP99Millis,
    double failedHeldSeconds,
    @Nullable Double recoveryMillis) {

  /** Share of recovered one-second windows' API requests that must succeed. */
  static final double RECOVERED = 0.90;

  double successRate() {
    return offered == 0 ? 0 : (double) succeeded / offered;
  }

  /** Share of the healthy route's requests answered with a 2xx. */
  double staticSuccessRate() {
    return statics == 0 ? 0 : (double) staticSucceeded / statics;
  }

  static RunResult of(
      String label,
      @Nullable Mode mode,
      LoadGenerator.Recording r,
      Timeline timeline,
      long runNanos,
      long apiAttempts,
      long originRequests,
      @Nullable Double timeToOpenMillis) {
    long offeredApi = 0;
    long succeeded = 0;
    long stale = 0;
    long fastFails = 0;
    long[] staticLatency = new long[r.count()];
    int statics = 0;
    long staticOk = 0;
    long[] healthyStaticLatency = new long[r.count()];
    int healthyStatics = 0;
    long healthyEnd = timeline.phase(Timeline.HEALTHY).endNanos(runNanos);
    long[] fastLatency = new long[r.count()];
    long[] apiLatency = new long[r.count()];
    long[] staleLatency = new long[r.count()];
    long heldNanos = 0;
    for (int i = 0; i < r.count(); i++) {
      boolean ok = r.status()[i] >= 200 && r.status()[i] < 300;
      if (ok) {
        succeeded++;
      } else {
        heldNanos += r.latencyNanos()[i];
      }
      if (r.stale()[i]) {
        staleLatency[(int) stale++] = r.latencyNanos()[i];
      }
      if (LoadGenerator.isStatic(i)) {
        staticLatency[statics++] = r.latencyNanos()[i];
        if (ok) {
          staticOk++;
        }
        if (i * r.intervalNanos() < healthyEnd) {
          healthyStaticLatency[healthyStatics++] = r.latencyNanos()[i];
        }
      } else {
        apiLatency[(int) offeredApi++] = r.latencyNanos()[i];
      }
      if (r.fastFail()[i]) {
        fastLatency[(int) fastFails++] = r.latencyNanos()[i];
      }
    }
    return new RunResult(
        label,
        mode,
        r.count(),
        offeredApi,
        apiAttempts,
        originRequests,
        succeeded,
        stale,
        p99Millis(staticLatency, statics),
        p99Millis(healthyStaticLatency, healthyStatics),
        statics,
        staticOk,
        quantileMillis(apiLatency, (int) offeredApi, 0.50),
        p99Millis(apiLatency, (int) offeredApi),
        stale == 0 ? null : p99Millis(staleLatency, (int) stale),
        timeToOpenMillis,
        fastFails,
        fastFails == 0 ? null : p99Millis(fastLatency, (int) fastFails),
        heldNanos / 1e9,
        recoveryMillis(r, timeline.phase(Timeline.RECOVERY).startNanos(runNanos)));
  }

  private static double p99Millis(long[] values, int n) {
    return quantileMillis(values, n, 0.99);
  }

  private static double quantileMillis(long[] values, int n, double q) {
    if (n == 0) {
      return 0;
    }
    long[] v = Arrays.copyOf(values, n);
    Arrays.sort(v);
    int at = (int) Math.ceil(q * n) - 1;
    return v[Math.max(0, at)] / 1e6;
  }

  /** Scans one-second windows (by due time) in 100 ms steps from {@code fromNanos}. */
  static @Nullable Double recoveryMillis(LoadGenerator.Recording r, long fromNanos) {
    long window = 1_000_000_000L;
    long step = 100_000_000L;
    long end = r.count() * r.intervalNanos();
    for (long t = fromNanos; t + window <= end; t += step) {
      int first = (int) Math.ceil((double) t / r.intervalNanos());
      int last = (int) Math.min(r.count(), (t + window) / r.intervalNanos());
      int api = 0;
      int ok = 0;
      for (int i = first; i < last; i++) {
        if (!LoadGenerator.isStatic(i)) {
          api++;
          if (r.status()[i] >= 200 && r.status()[i] < 300) {
            ok++;
          }
        }
      }
      if (api >= 3 && ok >= RECOVERED * api) {
        return (t - fromNanos) / 1e6;
      }
    }
    return null;
  }
}
