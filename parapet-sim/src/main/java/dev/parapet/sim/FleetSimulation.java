package dev.parapet.sim;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Decision;
import dev.parapet.core.breaker.Permit;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.breaker.TransitionEvent;
import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.limit.ConcurrencyGate;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.outcome.OutcomeClassifier;
import dev.parapet.core.outcome.SlowCallThreshold;
import dev.parapet.core.retry.BudgetSlot;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.retry.RetryAfter;
import dev.parapet.core.retry.RetryBudget;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.sim.Series.Col;
import java.time.Duration;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * Runs one {@link Variant} of a {@link Scenario} on the {@link Engine} and fills a {@link Series}.
 *
 * <p>How it works. A tick event every {@code tickMillis} generates each server's arrivals for the
 * tick (a deterministic fractional accumulator per server, started at a random phase, so the rate
 * is exact and servers are not aligned); arrivals of one tick share the tick's timestamp. Each
 * arrival is then an individual request: it takes a worker slot (or is refused when the server has
 * none free), goes through the server's own real {@link CircuitBreaker} (seed 002: local breakers,
 * no coordination), and each origin attempt is one event at the time the attempt ends, whose
 * outcome is classified with the core's {@link OutcomeClassifier} and completes the breaker's
 * {@link Permit}. Failed attempts are retried naively (seed 000's "one retry"), or through the
 * core's {@link RetryPolicy} and {@link RetryBudget}, or not at all. The origin's answer comes from
 * the current {@link OriginPhase}; above its capacity its latency is multiplied by the load factor
 * (attempts in the previous second / capacity), so overload shows up as slowness first.
 *
 * <p>Aggregation, for speed: requests to the healthy origin (or cache) never reach a breaker or a
 * budget, so they are not events; each only holds its worker until a tick, counted in a ring of
 * per-tick counts per server (worker release rounded up to the tick). Every request to the sick
 * origin is individual: one breaker admission, one classified outcome per attempt, in time order.
 *
 * <p>Optional, per variant: a real {@code ConcurrencyGate} (core {@code LimitAlgorithm}) that every
 * origin attempt passes before the breaker (a refusal is shed at once), and hedging through the
 * core's {@link HedgePolicy}: a timer at the rolling p95 per first attempt, a second attempt with
 * its own breaker permit and budget place, first good answer wins, the loser is cancelled (a
 * request or hedge whose event is still queued is recycled only when that event fires).
 *
 * <p>Deadlines: the request's budget is the edge timeout; each attempt's timeout is min(connector
 * timeout, what the edge budget has left), as the core's deadline propagation makes it (DESIGN
 * "Deadlines": edge 8 s > shield 5 s > connector 3 s holds by construction). Each tier holds a
 * worker for as long as the tier below keeps it waiting, which is what the per-tier worker-seconds
 * add up.
 */
final class FleetSimulation {
  private static final long SECOND = 1_000_000_000L;
  private static final long CONNECT_REFUSED_NANOS = 1_000_000L;
  private static final double HEALTHY_SIGMA = 0.3;
  private static final int HEALTHY_RING = 1024;
  private static final int HEALTHY_SAMPLES = 4096;
  private static final int ORIGIN_SAMPLES = 16384;

  private final Scenario sc;
  private final Variant v;
  private final Engine engine;
  private final SimRandom random;
  private final Series series;
  private final Server[] servers;
  private final OutcomeClassifier classifier;
  private final long endNanos;
  private final long tickNanos;
  private final long[] phaseEnds;
  // The variant's timeouts, read per attempt (the variant keeps them as a List<Long>).
  private final long edgeTimeout;
  private final long shieldTimeout;
  private final long connectorTimeout;
  private final boolean threeTiers;
  // Healthy-route holds: 4,096 seeded log-normal draws, grouped by the tick that releases them
  // (released at the first tick at or after the latency, at least the next one, at most the ring's
  // length): the ticks, their share and their mean hold in ms.
  private final int[] healthyBinTicks;
  private final double[] healthyBinShare;
  private final double[] healthyBinMeanMs;
  // Origin latencies: per phase, ORIGIN_SAMPLES seeded log-normal values (median × e^(σ·z)), picked
  // at random per attempt: one draw and a load instead of a Gaussian and an exp().
  private final double[][] originNanos;

  private int phase;
  private int currentSecond = -1;
  private long attemptsThisSecond;
  private double loadFactor = 1.0;
  private long firstOpenNanos = -1;
  private long opens;
  private int notClosed;

  private FleetSimulation(Scenario sc, Variant v, long seed) {
    this.sc = sc;
    this.v = v;
    this.engine = new Engine(seed);
    this.random = engine.random();
    this.endNanos = (long) (sc.durationSeconds() * SECOND);
    this.tickNanos = sc.tickMillis() * 1_000_000L;
    this.series = new Series((int) Math.ceil(sc.durationSeconds()));
    this.classifier =
        OutcomeClassifier.standard()
            .withSlowCalls(
                SlowCallThreshold.absolute(
                    Duration.ofNanos((long) (sc.slowThresholdMillis() * 1_000_000L))));
    this.edgeTimeout = v.edgeTimeoutNanos();
    this.shieldTimeout = v.tierTimeoutNanos(1);
    this.connectorTimeout = v.connectorTimeoutNanos();
    this.threeTiers = v.tierTimeoutsMillis().size() == 3;
    this.phaseEnds = new long[sc.timeline().size()];
    for (int i = 0; i < phaseEnds.length; i++) {
      phaseEnds[i] = (long) ((sc.phaseStart(i) + sc.timeline().get(i).seconds()) * SECOND);
    }
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
    // A stream of its own, so the table does not shift the run's draws.
    Engine tableSource = new Engine(seed ^ 0x632be59bd9b4e019L);
    double[] z = new double[ORIGIN_SAMPLES];
    for (int i = 0; i < ORIGIN_SAMPLES; i++) {
      z[i] = tableSource.nextGaussian();
    }
    this.originNanos = new double[sc.timeline().size()][];
    for (int i = 0; i < originNanos.length; i++) {
      OriginPhase p = sc.timeline().get(i);
      double[] table = new double[ORIGIN_SAMPLES];
      for (int k = 0; k < ORIGIN_SAMPLES; k++) {
        table[k] = p.medianMillis() * 1_000_000.0 * Math.exp(p.sigma() * z[k]);
      }
      originNanos[i] = table;
    }
    this.servers = new Server[sc.servers()];
    BreakerListener listener =
        new BreakerListener() {
          @Override
          public void onTransition(TransitionEvent e) {
            onBreakerTransition(e);
          }
        };
    for (int i = 0; i < servers.length; i++) {
      servers[i] = new Server(i, listener);
    }
  }

  /** Runs {@code variant} of {@code scenario} with {@code seed}. */
  static RunResult run(Scenario scenario, Variant variant, long seed) {
    FleetSimulation sim = new FleetSimulation(scenario, variant, seed);
    sim.engine.schedule(sim.new Tick(), 0);
    sim.engine.runUntil(sim.endNanos + 60 * SECOND);
    return new RunResult(
        scenario,
        variant,
        seed,
        sim.series,
        sim.firstOpenNanos,
        sim.opens,
        sim.engine.firedCount());
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

  private static int second(long nowNanos) {
    return (int) (nowNanos / SECOND);
  }

  private final class Server {
    final @Nullable CircuitBreaker breaker;
    final @Nullable ExtraLoadBudget budget;
    final @Nullable RetryPolicy retry;
    final @Nullable ConcurrencyGate gate;
    final @Nullable RollingLatencyHistogram latencies;
    final @Nullable HedgePolicy hedging;
    final ArrayDeque<Hedge> freeHedges = new ArrayDeque<>();
    double arrivals;
    double sickAcc;
    int busy;
    // Healthy-route release apportionment, per release bin (see releaseHealthy).
    final double[] healthyCredit = new double[healthyBinTicks.length];
    final long[] healthyCount = new long[healthyBinTicks.length];
    // Healthy-route requests due to finish, by tick (a ring of counts): they never touch the core,
    // so they are not individual events; each only holds a worker until its tick.
    final int[] healthyDue = new int[HEALTHY_RING];
    // Finished requests, reused (a finished request is never scheduled again).
    final ArrayDeque<Request> free = new ArrayDeque<>();

    Server(int id, BreakerListener listener) {
      BreakerPolicy p = v.breaker();
      this.breaker =
          p == null
              ? null
              : new CircuitBreaker(
                  BreakerKey.of(Scope.ORIGIN, "origin@server-" + id), p, random, listener, 0);
      if (v.retry() == RetryMode.BUDGET) {
        this.budget =
            new ExtraLoadBudget(
                new RetryBudget(v.budgetRatio(), v.budgetMin()), ExtraLoadBudget.Sharing.SHARED);
        this.retry = RetryPolicy.withDefaults(random, budget);
      } else if (v.hedge()) {
        // Hedges draw from the same kind of extra-load budget as retries (the core's defaults).
        this.budget = ExtraLoadBudget.sharedDefaults();
        this.retry = null;
      } else {
        this.budget = null;
        this.retry = null;
      }
      if (v.hedge()) {
        this.latencies = RollingLatencyHistogram.withDefaults(0);
        ExtraLoadBudget extra = budget;
        this.hedging = extra == null ? null : HedgePolicy.withDefaults(latencies, extra);
      } else {
        this.latencies = null;
        this.hedging = null;
      }
      LimitSpec limit = v.limit();
      this.gate = limit == null ? null : new ConcurrencyGate(limit.create(random));
      this.arrivals = random.nextDouble();
      this.sickAcc = random.nextDouble();
    }
  }

  private final class Tick extends SimEvent {
    @Override
    void fire(long now) {
      while (phase < phaseEnds.length - 1 && now - phaseEnds[phase] >= 0) {
        phase++;
      }
      int sec = second(now);
      if (sec != currentSecond) {
        loadFactor =
            sc.capacityRps() > 0 ? Math.max(1.0, attemptsThisSecond / sc.capacityRps()) : 1.0;
        attemptsThisSecond = 0;
        currentSecond = sec;
        long busy = 0;
        long limits = 0;
        for (Server s : servers) {
          busy += s.busy;
          ConcurrencyGate g = s.gate;
          if (g != null) {
            limits += g.limit();
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
      for (Server s : servers) {
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

  private static final int ATTEMPT_DONE = 0;
  private static final int RETRY = 1;

  private final class Request extends SimEvent {
    final Server server;
    long start;
    final @Nullable Permit permit;
    final @Nullable BudgetSlot slot;
    final dev.parapet.core.limit.@Nullable Permit slotPermit;
    int step;
    int attempts;
    boolean permitted;
    // Hedging: the request's hedge (timer or attempt) if any; whether the user has been answered;
    // whether the first attempt's event is still in the queue; whether the first attempt failed
    // and the hedge's answer is awaited.
    @Nullable Hedge hedge;
    boolean answered;
    boolean mainPending;
    boolean waitingForHedge;
    long attemptStart;
    Outcome outcome = Outcome.SUCCESS;

    Request(Server server, long start) {
      this.server = server;
      this.start = start;
      this.permit = server.breaker != null ? new Permit() : null;
      this.slot = server.budget != null ? new BudgetSlot() : null;
      this.slotPermit = server.gate != null ? new dev.parapet.core.limit.Permit() : null;
    }

    @Override
    long touch() {
      long t = at + step;
      if (permit != null && permit.isActive()) {
        t++;
      }
      if (slot != null && slot.isHeld()) {
        t++;
      }
      return t;
    }

    @Override
    void fire(long now) {
      switch (step) {
        case ATTEMPT_DONE -> attemptDone(this, now);
        default -> startAttempt(this, now);
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
  private double releaseHealthy(Server s, int n, long tickIndex) {
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

  private void arriveSick(Server s, long now) {
    s.busy++;
    Request r = obtain(s, now);
    if (s.budget != null) {
      s.budget.requestStarted();
    }
    startAttempt(r, now);
  }

  private Request obtain(Server s, long now) {
    Request r = s.free.pollFirst();
    if (r == null) {
      return new Request(s, now);
    }
    r.start = now;
    r.attempts = 0;
    r.permitted = false;
    r.hedge = null;
    r.answered = false;
    r.mainPending = false;
    r.waitingForHedge = false;
    r.outcome = Outcome.SUCCESS;
    return r;
  }

  private void startAttempt(Request r, long now) {
    int sec = second(now);
    long remaining = r.start + edgeTimeout - now;
    if (remaining <= 0) {
      finish(r, false, now);
      return;
    }
    r.permitted = false;
    // The concurrency limiter first (it guards all origin-bound work), then the breaker.
    ConcurrencyGate gate = r.server.gate;
    dev.parapet.core.limit.Permit slotPermit = r.slotPermit;
    if (gate != null && slotPermit != null && !gate.tryAcquire(slotPermit, now)) {
      series.add(sec, Col.SHED, 1);
      finish(r, false, now);
      return;
    }
    CircuitBreaker breaker = r.server.breaker;
    Permit permit = r.permit;
    if (breaker != null && permit != null) {
      Decision d = breaker.tryAcquire(permit, now);
      if (!d.isPermitted()) {
        series.add(sec, Col.FAST_FAIL, 1);
        if (slotPermit != null && slotPermit.isActive()) {
          slotPermit.onIgnore(now); // no attempt: says nothing about the origin
        }
        finish(r, false, now);
        return;
      }
      r.permitted = true;
      if (d == Decision.PROBE) {
        series.add(sec, Col.PROBES, 1);
      }
    }
    r.attempts++;
    attemptsThisSecond++;
    series.add(sec, Col.ATTEMPTS, 1);
    if (r.attempts > 1) {
      series.add(sec, Col.RETRIES, 1);
    }
    long timeout = Math.min(connectorTimeout, remaining);
    long hold = drawAttempt(timeout, now);
    r.outcome = drawnOutcome;
    r.attemptStart = now;
    r.step = ATTEMPT_DONE;
    r.mainPending = true;
    HedgePolicy hedging = r.server.hedging;
    if (hedging != null && r.attempts == 1) {
      armHedge(r, hedging, hold, now);
    }
    engine.schedule(r, now + hold);
  }

  // The outcome of the last drawAttempt (a field, so the hot path allocates nothing).
  private Outcome drawnOutcome = Outcome.SUCCESS;

  /**
   * Draws one origin attempt started now from the current phase: returns how long it holds the
   * connection and leaves its outcome in {@link #drawnOutcome}.
   */
  private long drawAttempt(long timeout, long now) {
    OriginPhase p = sc.timeline().get(phase);
    if (p.down()) {
      drawnOutcome = Outcome.CONNECT_FAILURE;
      return CONNECT_REFUSED_NANOS;
    }
    if (p.hangRate() > 0 && random.nextDouble() < p.hangRate()) {
      drawnOutcome = Outcome.TIMEOUT;
      return timeout;
    }
    long latency =
        Math.max(1L, (long) (originNanos[phase][random.nextInt(ORIGIN_SAMPLES)] * loadFactor));
    if (latency > timeout) {
      drawnOutcome = Outcome.TIMEOUT;
      return timeout;
    }
    int status = p.errorRate() > 0 && random.nextDouble() < p.errorRate() ? 503 : 200;
    drawnOutcome = classifier.classifyResponse(status, latency, now);
    return latency;
  }

  /**
   * Arms the request's hedge timer (HedgePolicy: the origin's rolling p95, at least 20 ms, no hedge
   * without 20 samples) unless the attempt will be over before it fires.
   */
  private void armHedge(Request r, HedgePolicy hedging, long hold, long now) {
    hedging.onRequest();
    long delay = hedging.delayNanos(now);
    if (delay == HedgePolicy.NO_HEDGE || delay >= hold) {
      // The timer would find the attempt answered: nothing to hedge (and nothing to schedule).
      return;
    }
    Hedge h = r.server.freeHedges.pollFirst();
    if (h == null) {
      h = new Hedge(r.server);
    }
    h.request = r;
    h.cancelled = false;
    h.step = HEDGE_TIMER;
    r.hedge = h;
    engine.schedule(h, now + delay);
  }

  private void attemptDone(Request r, long now) {
    r.mainPending = false;
    if (r.answered) {
      // Lost to its hedge: cancelled (and accounted) when the hedge won; free it only now, when its
      // event has fired.
      recycle(r);
      return;
    }
    int sec = second(now);
    long hold = now - r.attemptStart;
    if (threeTiers) {
      // The connector waits for the origin; the shield waits for the connector.
      series.add(sec, Col.WS_CONNECTOR_MS, hold / 1_000_000L);
      series.add(sec, Col.WS_SHIELD_MS, Math.min(hold, shieldTimeout) / 1_000_000L);
    }
    Permit permit = r.permit;
    if (r.permitted && permit != null) {
      permit.onOutcome(r.outcome, now);
    }
    dev.parapet.core.limit.Permit slotPermit = r.slotPermit;
    if (slotPermit != null && slotPermit.isActive()) {
      // Timeouts, refusals and 5xx are congestion signals for the limit algorithm.
      if (r.outcome.isFailure()) {
        slotPermit.onDropped(now);
      } else {
        slotPermit.onSuccess(now);
      }
    }
    BudgetSlot slot = r.slot;
    if (slot != null && slot.isHeld()) {
      slot.release();
    }
    if (r.outcome == Outcome.TIMEOUT) {
      series.add(sec, Col.TIMEOUTS, 1);
    }
    recordLatency(r.server, r.outcome, hold, now);
    Hedge h = r.hedge;
    if (h != null) {
      if (h.step == HEDGE_TIMER) {
        h.cancelled = true; // the timer fires later and finds nothing to do
        r.hedge = null;
      } else if (!r.outcome.isFailure()) {
        cancelHedge(h, now);
      } else {
        // The first attempt failed while its hedge is out: the hedge's answer decides.
        r.waitingForHedge = true;
        return;
      }
    }
    if (!r.outcome.isFailure()) {
      series.add(sec, Col.ORIGIN_OK, 1);
      finish(r, true, now);
      return;
    }
    switch (v.retry()) {
      case NAIVE -> {
        if (r.attempts < 2) {
          startAttempt(r, now);
        } else {
          finish(r, false, now);
        }
      }
      case BUDGET -> {
        RetryPolicy policy = r.server.retry;
        long decision =
            policy == null || slot == null
                ? -1
                : policy.decide(
                    r.attempts, false, RetryAfter.ABSENT, r.start + edgeTimeout - now, slot);
        if (RetryPolicy.isRetry(decision)) {
          r.step = RETRY;
          engine.schedule(r, now + decision);
        } else {
          finish(r, false, now);
        }
      }
      case NONE -> finish(r, false, now);
    }
  }

  private void finish(Request r, boolean ok, long now) {
    int sec = second(now);
    r.server.busy--;
    series.add(sec, Col.ANSWERED, 1);
    if (ok) {
      series.add(sec, Col.USER_OK, 1);
      series.add(sec, Col.SICK_USER_OK, 1);
    }
    series.add(sec, Col.WS_EDGE_MS, (now - r.start) / 1_000_000L);
    series.addLatency(sec, now - r.start);
    BudgetSlot slot = r.slot;
    if (slot != null && slot.isHeld()) {
      slot.release();
    }
    ExtraLoadBudget budget = r.server.budget;
    if (budget != null) {
      budget.requestFinished();
    }
    r.answered = true;
    if (!r.mainPending) {
      recycle(r);
    }
  }

  private void recycle(Request r) {
    r.server.free.addFirst(r);
  }

  private static void recordLatency(Server s, Outcome outcome, long hold, long now) {
    RollingLatencyHistogram latencies = s.latencies;
    if (latencies != null && outcome != Outcome.TIMEOUT && outcome != Outcome.CONNECT_FAILURE) {
      latencies.record(hold, now);
    }
  }

  /** Cancels a hedge in flight (its request was answered): no evidence, its places given back. */
  private void cancelHedge(Hedge h, long now) {
    Request r = h.request;
    h.cancelled = true;
    if (r != null) {
      r.hedge = null;
    }
    if (h.permitted) {
      h.permit.release(now);
    }
    if (h.slot.isHeld()) {
      h.slot.release();
    }
    accountConnector(now - h.attemptStart, now);
  }

  private void accountConnector(long hold, long now) {
    if (threeTiers) {
      int sec = second(now);
      series.add(sec, Col.WS_CONNECTOR_MS, hold / 1_000_000L);
      series.add(sec, Col.WS_SHIELD_MS, Math.min(hold, shieldTimeout) / 1_000_000L);
    }
  }

  private static final int HEDGE_TIMER = 0;
  private static final int HEDGE_DONE = 1;

  /**
   * A hedge of one request: first its timer, then (if the core's {@link HedgePolicy} says so) a
   * second attempt racing the first; the first good answer wins and the other is cancelled. A hedge
   * whose request no longer needs it is marked cancelled and recycled when its event fires.
   */
  private final class Hedge extends SimEvent {
    final Server server;
    final Permit permit = new Permit();
    final BudgetSlot slot = new BudgetSlot();
    @Nullable Request request;
    int step;
    boolean cancelled;
    boolean permitted;
    long attemptStart;
    Outcome outcome = Outcome.SUCCESS;

    Hedge(Server server) {
      this.server = server;
    }

    @Override
    void fire(long now) {
      Request r = request;
      if (cancelled || r == null) {
        request = null;
        server.freeHedges.addFirst(this);
        return;
      }
      if (step == HEDGE_TIMER) {
        sendHedge(this, r, now);
      } else {
        hedgeDone(this, r, now);
      }
    }
  }

  private void sendHedge(Hedge h, Request r, long now) {
    Server s = h.server;
    HedgePolicy hedging = s.hedging;
    CircuitBreaker breaker = s.breaker;
    boolean closed = breaker == null || breaker.state() == State.CLOSED;
    if (hedging == null || !hedging.tryHedge(closed, 0, h.slot).isHedge()) {
      dropHedge(h, r);
      return;
    }
    h.permitted = false;
    if (breaker != null) {
      if (!breaker.tryAcquire(h.permit, now).isPermitted()) {
        h.slot.release();
        dropHedge(h, r);
        return;
      }
      h.permitted = true;
    }
    int sec = second(now);
    attemptsThisSecond++;
    series.add(sec, Col.ATTEMPTS, 1);
    series.add(sec, Col.HEDGES, 1);
    long timeout = Math.min(connectorTimeout, r.start + edgeTimeout - now);
    long hold = drawAttempt(Math.max(1, timeout), now);
    h.outcome = drawnOutcome;
    h.attemptStart = now;
    h.step = HEDGE_DONE;
    engine.schedule(h, now + hold);
  }

  private void dropHedge(Hedge h, Request r) {
    r.hedge = null;
    h.request = null;
    h.server.freeHedges.addFirst(h);
  }

  private void hedgeDone(Hedge h, Request r, long now) {
    int sec = second(now);
    long hold = now - h.attemptStart;
    accountConnector(hold, now);
    if (h.permitted) {
      h.permit.onOutcome(h.outcome, now);
    }
    if (h.slot.isHeld()) {
      h.slot.release();
    }
    recordLatency(h.server, h.outcome, hold, now);
    if (h.outcome == Outcome.TIMEOUT) {
      series.add(sec, Col.TIMEOUTS, 1);
    }
    r.hedge = null;
    h.request = null;
    h.server.freeHedges.addFirst(h);
    boolean ok = !h.outcome.isFailure();
    if (ok) {
      series.add(sec, Col.ORIGIN_OK, 1);
      series.add(sec, Col.HEDGE_WINS, 1);
    }
    if (r.waitingForHedge) {
      // The first attempt already failed: this answer is the request's.
      finish(r, ok, now);
    } else if (ok) {
      // The hedge won: cancel the first attempt (its event fires later and only frees the request).
      Permit permit = r.permit;
      if (r.permitted && permit != null) {
        permit.release(now);
      }
      dev.parapet.core.limit.Permit slotPermit = r.slotPermit;
      if (slotPermit != null && slotPermit.isActive()) {
        slotPermit.onIgnore(now);
      }
      accountConnector(now - r.attemptStart, now);
      finish(r, true, now);
    }
    // A failed hedge while the first attempt is still out: the first attempt decides.
  }
}
