package dev.parapet.sim.replay;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Decision;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.Permit;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.RandomSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One policy over the whole log: a shadow {@link CircuitBreaker} per route, fed each record's start
 * (admission) and end (outcome) in time order.
 *
 * <p>How it works. Starts arrive in start order (the {@link ReorderWindow} saw to it). Each
 * admitted call arms a pooled {@link Permit} and waits {@link InFlight}, ordered by (end, arrival);
 * before a start at {@code t}, every end before {@code t} completes its permit with the record's
 * outcome, so a probe's verdict comes at its real latency. At equal times starts go first. The
 * calls in flight — rate times latency — are all that is held, and permits return to the pool:
 * nothing grows with the log. One seeded random source per policy (the breakers' jitter) keeps a
 * run deterministic whatever thread a policy runs on.
 */
final class PolicyRun {
  private static final Outcome[] OUTCOMES = Outcome.values();

  final String name;
  final BreakerPolicy policy;
  private final BreakerPolicy shadow;
  private final RandomSource random;
  private final RouteTable routes;
  private final ReplayOptions options;
  private RouteResult[] results = new RouteResult[16];
  private CircuitBreaker[] breakers = new CircuitBreaker[16];
  private final boolean countsTraffic;
  private @Nullable Bins[] trafficRequests = new Bins[16];
  private @Nullable Bins[] trafficFailures = new Bins[16];

  private final InFlight inFlight = new InFlight();
  private Permit[] pool = new Permit[256];
  private int pooled;

  PolicyRun(
      String name,
      BreakerPolicy policy,
      RouteTable routes,
      ReplayOptions options,
      boolean countsTraffic) {
    this.name = name;
    this.countsTraffic = countsTraffic;
    this.policy = policy;
    this.shadow = policy.toBuilder().mode(Mode.SHADOW).build();
    this.random = RandomSource.seeded(options.seed());
    this.routes = routes;
    this.options = options;
  }

  /** Feeds {@code n} records of a batch, in start order. */
  void feed(Batch b) {
    for (int i = 0; i < b.size; i++) {
      start(b.start[i], b.latency[i], b.route[i], b.outcome[i]);
    }
  }

  void start(long now, long latencyNanos, int routeId, byte outcomeCode) {
    completeBefore(now);
    RouteResult r = route(routeId, now);
    CircuitBreaker breaker = breakers[routeId];
    Permit p = pooled > 0 ? pool[--pooled] : new Permit();
    Decision d = breaker.tryAcquire(p, now);
    Outcome o = OUTCOMES[outcomeCode];
    boolean rejected = d == Decision.SHADOW_PERMITTED;
    r.requests++;
    if (rejected) {
      r.wouldReject++;
    }
    if (o.isFailure()) {
      r.failures++;
    } else if (o == Outcome.SLOW) {
      r.slow++;
    }
    r.request(now, o.isFailure() || o == Outcome.SLOW, rejected);
    if (countsTraffic) {
      Bins req = trafficRequests[routeId];
      if (req == null) {
        req = new Bins();
        trafficRequests[routeId] = req;
        trafficFailures[routeId] = new Bins();
      }
      req.add(now, 1);
      if (o.isFailure()) {
        Objects.requireNonNull(trafficFailures[routeId]).add(now, 1);
      }
    }
    if (d.isPermitted()) {
      inFlight.push(now + latencyNanos, p, outcomeCode);
    } else {
      recycle(p);
    }
  }

  /** Completes every call still in flight and closes the last bins. */
  void finish() {
    completeBefore(Long.MAX_VALUE);
    for (RouteResult r : results) {
      if (r != null) {
        r.finish();
      }
    }
  }

  private RouteResult route(int id, long now) {
    if (id >= results.length) {
      int n = Math.max(id + 1, results.length * 2);
      results = Arrays.copyOf(results, n);
      breakers = Arrays.copyOf(breakers, n);
      trafficRequests = Arrays.copyOf(trafficRequests, n);
      trafficFailures = Arrays.copyOf(trafficFailures, n);
    }
    RouteResult r = results[id];
    if (r == null) {
      String routeName = routes.name(id);
      r =
          new RouteResult(
              routeName,
              options.troubleBinNanos(),
              options.troubleRate(),
              options.troubleMinRequests());
      results[id] = r;
      breakers[id] =
          new CircuitBreaker(BreakerKey.of(Scope.ROUTE, routeName), shadow, random, r, now);
    }
    return r;
  }

  /** Completes, in order, every call in flight that ends before {@code now}. */
  private void completeBefore(long now) {
    InFlight f = inFlight;
    while (f.pollBefore(now)) {
      Permit p = f.polledPermit;
      p.onOutcome(OUTCOMES[f.polledOutcome], f.polledEnd);
      recycle(p);
    }
  }

  private void recycle(Permit p) {
    if (pooled == pool.length) {
      pool = Arrays.copyOf(pool, pooled * 2);
    }
    pool[pooled++] = p;
  }

  /** Requests per bin on route {@code id} (the first policy counts them), or null. */
  @Nullable Bins trafficRequests(int id) {
    return id < trafficRequests.length ? trafficRequests[id] : null;
  }

  /** Failures per bin on route {@code id}. */
  Bins trafficFailures(int id) {
    return Objects.requireNonNull(trafficFailures[id]);
  }

  /** The most calls in flight at once. */
  int maxInFlight() {
    return inFlight.maxSize();
  }

  /** Entries the in-flight heap can hold without growing: what it retains. */
  int inFlightCapacity() {
    return inFlight.capacity();
  }

  /** The routes seen, by name. */
  List<RouteResult> results() {
    List<RouteResult> out = new ArrayList<>();
    for (RouteResult r : results) {
      if (r != null) {
        out.add(r);
      }
    }
    out.sort(Comparator.comparing(r -> r.route));
    return out;
  }
}
