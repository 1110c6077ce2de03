package dev.parapet.sim;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.State;
import dev.parapet.core.breaker.TransitionEvent;
import dev.parapet.core.deadline.DeadlinePolicy;
import dev.parapet.core.exchange.AttemptSequence;
import dev.parapet.core.outcome.OutcomeClassifier;
import dev.parapet.core.outcome.SlowCallThreshold;
import dev.parapet.sim.Series.Col;
import java.time.Duration;

/**
 * Runs one {@link Variant} of a {@link Scenario} on the {@link Engine} and fills a {@link Series}.
 *
 * <p>How it works. A tick event every {@code tickMillis} generates each server's arrivals for the
 * tick (a deterministic fractional accumulator per server, started at a random phase, so the rate
 * is exact and servers are not aligned); arrivals of one tick share the tick's timestamp. Each
 * arrival takes a worker slot (or is refused when the server has none free). A request to the
 * origin under test is then a {@link SimRequest}: the core's {@link AttemptSequence}, the decision
 * sequence the proxy runs, driven in virtual time against the server's own breaker, attempt policy
 * and admission control ({@link SimServer}); the origin's answers come from {@link Origin}.
 *
 * <p>Aggregation, for speed: requests to the healthy origin (or cache) never reach the core, so
 * they are not events; each only holds its worker until a tick, counted in a ring of per-tick
 * counts per server (worker release rounded up to the tick). Every request to the origin under test
 * is individual: one sequence, one event per attempt and per timer, in time order.
 *
 * <p>Deadlines: the request's budget is the edge timeout; the sequence gives each attempt min(
 * connector timeout, what the budget leaves after the edge's reserve), as the proxy does (DESIGN
 * "Deadlines": edge 8 s > shield 5 s > connector 3 s holds by construction). Each tier holds a
 * worker for as long as the tier below keeps it waiting, which is what the per-tier worker-seconds
 * add up.
 */
final class FleetSimulation {
  private static final long SECOND = 1_000_000_000L;
  private static final double HEALTHY_SIGMA = 0.3;
  private static final int HEALTHY_RING = 1024;
  private static final int HEALTHY_SAMPLES = 4096;

  private final Scenario sc;
  final Engine engine;
  final Series series;
  final Origin origin;
  private final Decisions decisions = new Decisions();
  // Decisions after the last second (requests draining) are not counted, as in the series.
  private final Decisions afterRun = new Decisions();
  final Wakeup.Pool wakeups = new Wakeup.Pool();
  final DeadlinePolicy deadlines;
  final long edgeTimeoutNanos;
  final boolean hedging;
  private final double hitRatio;
  private final double staleIfError;
  private final SimServer[] servers;
  private final long endNanos;
  private final long tickNanos;
  private final long shieldTimeout;
  private final boolean threeTiers;
  // Healthy-route holds: 4,096 seeded log-normal draws, grouped by the tick that releases them
  // (released at the first tick at or after the latency, at least the next one, at most the ring's
  // length): the ticks, their share and their mean hold in ms.
  private final int[] healthyBinTicks;
  private final double[] healthyBinShare;
  private final double[] healthyBinMeanMs;

  private int currentSecond = -1;
  private int cachedSecond;
  private long nextSecondNanos;
  private long requestIds;
  private long firstOpenNanos = -1;
  private long opens;
  private int notClosed;

  private FleetSimulation(Scenario sc, Variant v, long seed) {
    this.sc = sc;
    this.engine = new Engine(seed);
    SimRandom random = engine.random();
    this.endNanos = (long) (sc.durationSeconds() * SECOND);
    this.tickNanos = sc.tickMillis() * 1_000_000L;
    this.series = new Series((int) Math.ceil(sc.durationSeconds()));
    this.deadlines = v.deadlines();
    this.edgeTimeoutNanos = v.edgeTimeoutNanos();
    this.hedging = v.hedge();
    this.shieldTimeout = v.tierTimeoutNanos(1);
    this.threeTiers = v.tierTimeoutsMillis().size() == 3;
    int[] countByTick = new int[HEALTHY_RING];
    long[] msByTick = new long[HEALTHY_RING];
    for (int i = 0; i < HEALTHY_SAMPLES; i++) {
      double z = engine.nextGaussian();
      long latency =
          Math.max(
              1L, (long) (sc.healthyMedianMillis() * 1_000_000.0 * Math.exp(HEALTHY_SIGMA * z)));
      int ticks =
          (int) Math.min(HEALTHY_RING - 1, Math.max(1, (latency + tickNanos - 1) / tickNanos));
      countByTick[ticks]++;
      msByTick[ticks] += latency / 1_000_000L;
    }
    int bins = 0;
    for (int c : countByTick) {
      bins += c > 0 ? 1 : 0;
    }
    this.healthyBinTicks = new int[bins];
    this.healthyBinShare = new double[bins];
    this.healthyBinMeanMs = new double[bins];
    for (int t = 0, b = 0; t < HEALTHY_RING; t++) {
      if (countByTick[t] > 0) {
        healthyBinTicks[b] = t;
        healthyBinShare[b] = (double) countByTick[t] / HEALTHY_SAMPLES;
        healthyBinMeanMs[b] = (double) msByTick[t] / countByTick[t];
        b++;
      }
    }
    this.origin =
        new Origin(sc.timeline(), sc.capacity(), seed, random, series.seconds(), tickNanos);
    this.hitRatio = sc.cache().hitRatio();
    this.staleIfError = sc.cache().staleIfError();
    OutcomeClassifier classifier =
        OutcomeClassifier.standard()
            .withSlowCalls(
                SlowCallThreshold.absolute(
                    Duration.ofNanos((long) (sc.slowThresholdMillis() * 1_000_000L))));
    this.servers = new SimServer[sc.servers()];
    BreakerListener listener =
        new BreakerListener() {
          @Override
          public void onTransition(TransitionEvent e) {
            onBreakerTransition(e);
          }
        };
    for (int i = 0; i < servers.length; i++) {
      servers[i] = new SimServer(this, i, v, classifier, random, listener, bins, HEALTHY_RING);
    }
  }

  /** Runs {@code variant} of {@code scenario} with {@code seed}. */
  static RunResult run(Scenario scenario, Variant variant, long seed) {
    FleetSimulation sim = new FleetSimulation(scenario, variant, seed);
    sim.engine.schedule(sim.new Tick(), 0);
    sim.engine.runUntil(sim.endNanos + 60 * SECOND);
    sim.origin.writeTo(sim.series);
    return new RunResult(
        scenario,
        variant,
        seed,
        sim.series,
        sim.firstOpenNanos,
        sim.opens,
        sim.engine.firedCount(),
        sim.decisions);
  }

  private void onBreakerTransition(TransitionEvent e) {
    if (e.to() == State.OPEN) {
      opens++;
      if (firstOpenNanos < 0) {
        firstOpenNanos = e.nowNanos();
      }
    }
    if (e.from() == State.CLOSED && e.to() != State.CLOSED) {
      notClosed++;
    } else if (e.from() != State.CLOSED && e.to() == State.CLOSED) {
      notClosed--;
    }
  }

  /** The simulated second {@code now} falls in (virtual time only grows: one division a second). */
  int second(long now) {
    if (now - nextSecondNanos >= 0) {
      cachedSecond = (int) (now / SECOND);
      nextSecondNanos = (cachedSecond + 1L) * SECOND;
    }
    return cachedSecond;
  }

  /** Where the core's decisions at {@code now} are counted (not past the run's last second). */
  Decisions decisions(long now) {
    return now - endNanos < 0 ? decisions : afterRun;
  }

  /** Counts one of {@code col} in the second of {@code now}. */
  void count(Col col, long now) {
    series.add(second(now), col, 1);
  }

  /**
   * A request to the origin under test has its answer: it gives its worker back. A failed one is
   * answered from a stale copy when the edge's cache holds one ({@code stale_if_error}).
   */
  void answered(SimRequest r, boolean ok, long now) {
    int sec = second(now);
    r.server.busy--;
    series.add(sec, Col.ANSWERED, 1);
    if (!ok && staleIfError > 0 && engine.random().nextDouble() < staleIfError) {
      series.add(sec, Col.STALE_SERVED, 1);
      ok = true;
    }
    if (ok) {
      series.add(sec, Col.USER_OK, 1);
      series.add(sec, Col.SICK_USER_OK, 1);
    }
    long held = now - r.startNanos();
    series.add(sec, Col.WS_EDGE_MS, held / 1_000_000L);
    series.addLatency(sec, held);
  }

  /** An attempt that held the connector (and the shield behind it) for {@code hold} is over. */
  void connectorReleased(long hold) {
    if (threeTiers) {
      int sec = second(engine.now());
      series.add(sec, Col.WS_CONNECTOR_MS, hold / 1_000_000L);
      series.add(sec, Col.WS_SHIELD_MS, Math.min(hold, shieldTimeout) / 1_000_000L);
    }
  }

  private void arriveSick(SimServer s, long now) {
    if (hitRatio > 0) {
      // A fresh cache hit is answered by the edge at once (its hold is negligible here).
      s.hitAcc += hitRatio;
      if (s.hitAcc >= 1.0) {
        s.hitAcc -= 1.0;
        int sec = second(now);
        series.add(sec, Col.CACHE_HITS, 1);
        series.add(sec, Col.ANSWERED, 1);
        series.add(sec, Col.USER_OK, 1);
        series.add(sec, Col.SICK_USER_OK, 1);
        return;
      }
    }
    s.busy++;
    new SimRequest(s, ++requestIds, now).begin(now);
  }

  private final class Tick extends SimEvent {
    @Override
    void fire(long now) {
      origin.advance(now);
      origin.sample(now);
      int sec = second(now);
      if (sec != currentSecond) {
        currentSecond = sec;
        long busy = 0;
        long limits = 0;
        for (SimServer s : servers) {
          busy += s.busy;
          AdmissionController a = s.admission;
          if (a != null) {
            limits += a.limit();
          }
        }
        series.set(sec, Col.BUSY_WORKERS, busy);
        series.set(sec, Col.LIMIT, limits);
        series.set(sec, Col.BREAKERS_NOT_CLOSED, notClosed);
      }
      double perTick = sc.ratePerServer() * sc.tickMillis() / 1000.0;
      int slot = (int) ((now / tickNanos) & (HEALTHY_RING - 1));
      long tickIndex = now / tickNanos;
      long released = 0;
      long offered = 0;
      long sickOffered = 0;
      long noWorker = 0;
      double healthyMs = 0;
      int healthy = 0;
      double sickShare = sc.sickShare();
      int workers = sc.workersPerServer();
      // 1.8 billion arrivals in fleet-300: counters are summed locally and written once per tick,
      // and healthy-route arrivals are counted, not looped over, when no arrival can be refused.
      for (SimServer s : servers) {
        int done = s.healthyDue[slot];
        if (done > 0) {
          s.healthyDue[slot] = 0;
          s.busy -= done;
          released += done;
        }
        s.arrivals += perTick;
        int n = (int) s.arrivals;
        s.arrivals -= n;
        offered += n;
        if (s.busy + n <= workers) {
          // Every arrival gets a worker (answers only free workers): no need to interleave them.
          double acc = s.sickAcc + n * sickShare;
          int sick = Math.min(n, (int) acc);
          s.sickAcc = acc - sick;
          sickOffered += sick;
          healthy += n - sick;
          s.busy += n - sick;
          for (int i = 0; i < sick; i++) {
            arriveSick(s, now);
          }
        } else {
          for (int i = 0; i < n; i++) {
            s.sickAcc += sickShare;
            boolean sick = s.sickAcc >= 1.0;
            if (sick) {
              s.sickAcc -= 1.0;
              sickOffered++;
            }
            if (s.busy >= workers) {
              noWorker++;
            } else if (sick) {
              arriveSick(s, now);
            } else {
              s.busy++;
              healthy++;
            }
          }
        }
        if (healthy > 0) {
          healthyMs += releaseHealthy(s, healthy, tickIndex);
          healthy = 0;
        }
      }
      series.add(sec, Col.ANSWERED, released + noWorker);
      series.add(sec, Col.USER_OK, released);
      series.add(sec, Col.HEALTHY_USER_OK, released);
      series.add(sec, Col.OFFERED, offered);
      series.add(sec, Col.SICK_OFFERED, sickOffered);
      series.add(sec, Col.NO_WORKER, noWorker);
      series.add(sec, Col.WS_EDGE_MS, Math.round(healthyMs));
      if (now + tickNanos - endNanos < 0) {
        engine.schedule(this, now + tickNanos);
      }
    }
  }

  /**
   * Spreads {@code n} healthy-route requests admitted in this tick over the ticks that release
   * them, in the proportions of the latency table, without a draw per request: each release bin
   * holds a credit that grows by n × its share; a bin releases the whole part of its credit, and
   * the last few requests (or the excess) go to the bins with the largest (smallest) remainder
   * (largest-remainder apportionment with carry: exact totals, exact shares over time, no bin
   * starved, the same every run). Returns their worker-milliseconds.
   */
  private double releaseHealthy(SimServer s, int n, long tickIndex) {
    double[] credit = s.healthyCredit;
    long[] count = s.healthyCount;
    int bins = credit.length;
    long assigned = 0;
    for (int b = 0; b < bins; b++) {
      credit[b] += n * healthyBinShare[b];
      count[b] = Math.max(0, (long) Math.floor(credit[b]));
      assigned += count[b];
    }
    while (assigned < n) {
      int best = 0;
      for (int b = 1; b < bins; b++) {
        if (credit[b] - count[b] > credit[best] - count[best]) {
          best = b;
        }
      }
      count[best]++;
      assigned++;
    }
    while (assigned > n) {
      int worst = -1;
      for (int b = 0; b < bins; b++) {
        if (count[b] > 0 && (worst < 0 || credit[b] - count[b] < credit[worst] - count[worst])) {
          worst = b;
        }
      }
      count[worst]--;
      assigned--;
    }
    double ms = 0;
    for (int b = 0; b < bins; b++) {
      long c = count[b];
      credit[b] -= c;
      if (c > 0) {
        s.healthyDue[(int) ((tickIndex + healthyBinTicks[b]) & (HEALTHY_RING - 1))] += (int) c;
        ms += c * healthyBinMeanMs[b];
      }
    }
    return ms;
  }
}
