package dev.parapet.proxy.metrics;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.State;
import dev.parapet.core.breaker.TransitionEvent;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.Ticker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * The proxy's Prometheus metrics under DESIGN.md's names. Label values come from configuration
 * (route ids, origin names, breaker keys) or from closed enums — never from request data — so
 * cardinality is bounded. Counters for every route × ending and origin × result are created up
 * front, so recording on the request path is a lookup by a configured name plus an increment.
 *
 * <p>A request's ending ({@code outcome} label) is either the origin's {@link Outcome} (success,
 * slow, failure_status, timeout, ...) or the reason the proxy answered itself (breaker_open,
 * no_route, ...), given at construction as {@code localReasons}.
 */
public final class ProxyMetrics implements BreakerListener {
  /** The route label for requests that matched no route. */
  public static final String NO_ROUTE = "none";

  private static final int OUTCOMES = Outcome.values().length;

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final List<String> localReasons;
  private final Map<String, Counter[]> requests = new ConcurrentHashMap<>();
  private final Map<String, Timer> durations = new ConcurrentHashMap<>();
  private final Map<String, Counter[]> attempts = new ConcurrentHashMap<>();
  private final Map<String, CircuitBreaker> breakers = new ConcurrentHashMap<>();
  private final Map<String, AtomicReference<Supplier<Number>>> gauges = new ConcurrentHashMap<>();
  private final Counter[] localRejections;
  private final Map<String, Counter> transitions = new ConcurrentHashMap<>();
  private final Map<String, Counter[]> probes = new ConcurrentHashMap<>();
  private final Map<String, Counter> events = new ConcurrentHashMap<>();
  private final Map<BreakerKey, AtomicLong> firstFailure = new ConcurrentHashMap<>();
  private final Timer timeToOpen;
  private final Map<String, Counter> cacheTotals = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> routeInflight = new ConcurrentHashMap<>();
  private final Map<String, Counter[]> originResponses = new ConcurrentHashMap<>();
  private final Map<String, Counter> opens = new ConcurrentHashMap<>();
  private final Map<String, Timer> connectTimes = new ConcurrentHashMap<>();
  private final BreakerEpisodes episodes;
  private final Map<String, String> routeOrigins = new ConcurrentHashMap<>();
  private final Map<String, Boolean> routeInfos = new ConcurrentHashMap<>();

  /** Metrics whose gauges of elapsed time read the system ticker. */
  public ProxyMetrics(List<String> routes, List<String> origins, List<String> localReasons) {
    this(routes, origins, localReasons, Ticker.system());
  }

  /**
   * @param routes route ids from configuration
   * @param origins origin names from configuration
   * @param localReasons the reasons the proxy answers itself, indexed as {@link #requestLocal} and
   *     {@link #localRejection} expect
   * @param ticker the proxy's ticker, read by gauges of elapsed time (how long a breaker is open)
   */
  public ProxyMetrics(
      List<String> routes, List<String> origins, List<String> localReasons, Ticker ticker) {
    this.localReasons = List.copyOf(localReasons);
    this.episodes = new BreakerEpisodes(ticker);
    timeToOpen =
        Timer.builder("parapet.time.to.open")
            .description(
                "From the first failure of an episode to the breaker opening (seed 001: time-to-open as an SLO)")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofMinutes(5))
            .register(registry);
    localRejections = new Counter[localReasons.size()];
    for (int i = 0; i < localRejections.length; i++) {
      localRejections[i] =
          Counter.builder("parapet.local.rejections")
              .description("Responses the proxy made itself, by reason")
              .tag("reason", lower(localReasons.get(i)))
              .register(registry);
    }
    List<String> routeLabels = new ArrayList<>(routes);
    routeLabels.add(NO_ROUTE);
    ensureRoutes(routeLabels);
    ensureOrigins(origins);
  }

  /**
   * Creates the counters of routes not seen before (a configuration reload may add some). Labels of
   * routes that went away stay exported with their last values, as Prometheus expects of counters.
   */
  public void ensureRoutes(List<String> routes) {
    for (String route : routes) {
      if (requests.containsKey(route)) {
        continue;
      }
      Counter[] byEnding = new Counter[OUTCOMES + localReasons.size()];
      for (int i = 0; i < byEnding.length; i++) {
        String ending =
            i < OUTCOMES
                ? lower(Outcome.values()[i].name())
                : lower(localReasons.get(i - OUTCOMES));
        byEnding[i] =
            Counter.builder("parapet.requests")
                .description("Requests by route and how they ended")
                .tag("route", route)
                .tag("outcome", ending)
                .register(registry);
      }
      durations.put(
          route,
          Timer.builder("parapet.request.duration")
              .description("Time from request head to the end of the response")
              .tag("route", route)
              .publishPercentileHistogram()
              .minimumExpectedValue(Duration.ofMillis(1))
              .maximumExpectedValue(Duration.ofSeconds(60))
              // One slot for the _max gauge instead of a ring of three: recorded on every
              // request, and each slot is a compare-and-set loop (~3 % of the event loop's CPU).
              // The max then covers the last expiry period (2 min) rather than a rolling window.
              .distributionStatisticBufferLength(1)
              .register(registry));
      Counter[] byClass = new Counter[5];
      for (int c = 0; c < byClass.length; c++) {
        byClass[c] =
            Counter.builder("parapet.origin.responses")
                .description(
                    "Responses the origin gave the route's requests, by status class, whatever the breaker counts as a failure")
                .tag("route", route)
                .tag("code", (c + 1) + "xx")
                .register(registry);
      }
      originResponses.put(route, byClass);
      LongAdder inflight = new LongAdder();
      routeInflight.put(route, inflight);
      Gauge.builder("parapet.route.inflight", inflight, LongAdder::sum)
          .description(
              "Requests of the route between routing and their answer (its share of the listener's admission)")
          .tag("route", route)
          .register(registry);
      requests.put(route, byEnding);
    }
  }

  /**
   * Route {@code route} sends its requests to origin {@code origin}: {@code
   * parapet_route_info{route,origin}} is 1, so alert rules can join a route's requests to its
   * origin's breakers. After a reload that moved the route, the old pair reads 0.
   */
  public void routeInfo(String route, String origin) {
    routeOrigins.put(route, origin);
    if (routeInfos.putIfAbsent(route + '|' + origin, Boolean.TRUE) == null) {
      Gauge.builder("parapet.route.info", routeOrigins, m -> origin.equals(m.get(route)) ? 1 : 0)
          .description("1 for each route and the origin it sends to")
          .tag("route", route)
          .tag("origin", origin)
          .register(registry);
    }
  }

  /**
   * The origin answered a request of {@code route} with {@code status} (the response forwarded).
   */
  public void originResponse(String route, int status) {
    Counter[] c = originResponses.get(route);
    int index = status / 100 - 1;
    if (c != null && index >= 0 && index < c.length) {
      c[index].increment();
    }
  }

  /** A client's request was routed to {@code route}; {@link #routeLeft} follows exactly once. */
  public void routeEntered(String route) {
    LongAdder n = routeInflight.get(route);
    if (n != null) {
      n.increment();
    }
  }

  /** Requests of every route between routing and their answer. */
  public long routeInflight() {
    long n = 0;
    for (LongAdder a : routeInflight.values()) {
      n += a.sum();
    }
    return n;
  }

  /** A request that {@link #routeEntered} {@code route} has its answer (or its client left). */
  public void routeLeft(String route) {
    LongAdder n = routeInflight.get(route);
    if (n != null) {
      n.decrement();
    }
  }

  /** Creates the counters of origins not seen before. */
  public void ensureOrigins(List<String> origins) {
    for (String origin : origins) {
      if (attempts.containsKey(origin)) {
        continue;
      }
      Counter[] byResult = new Counter[OUTCOMES];
      for (Outcome o : Outcome.values()) {
        byResult[o.ordinal()] =
            Counter.builder("parapet.origin.attempts")
                .description("Origin attempts by result")
                .tag("origin", origin)
                .tag("result", lower(o.name()))
                .register(registry);
      }
      attempts.put(origin, byResult);
      connectTimes.put(
          origin,
          Timer.builder("parapet.origin.connect.duration")
              .description(
                  "Time to establish a new connection to a host of the origin (successful connects only)")
              .tag("origin", origin)
              .publishPercentileHistogram()
              .minimumExpectedValue(Duration.ofNanos(100_000))
              .maximumExpectedValue(Duration.ofSeconds(30))
              .register(registry));
    }
  }

  /**
   * Where the connections of origin {@code origin} report how long each connect took, in
   * nanoseconds; a no-op for an origin not {@link #ensureOrigins ensured}.
   */
  public LongConsumer connectTimes(String origin) {
    Timer t = connectTimes.get(origin);
    if (t == null) {
      return nanos -> {};
    }
    return nanos -> t.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** A request the origin answered ended with {@code outcome} after {@code durationNanos}. */
  public void requestForwarded(String route, Outcome outcome, long durationNanos) {
    count(route, outcome.ordinal(), durationNanos);
  }

  /** A request the proxy answered itself for local reason number {@code reason}. */
  public void requestLocal(String route, int reason, long durationNanos) {
    count(route, OUTCOMES + reason, durationNanos);
    localRejections[reason].increment();
  }

  private void count(String route, int ending, long durationNanos) {
    Counter[] c = requests.get(route);
    if (c == null) {
      c = requests.get(NO_ROUTE);
      route = NO_ROUTE;
    }
    if (c != null) {
      c[ending].increment();
    }
    Timer t = durations.get(route);
    if (t != null) {
      t.record(durationNanos, TimeUnit.NANOSECONDS);
    }
  }

  /** An origin attempt ended with {@code outcome}. */
  public void attempt(String origin, Outcome outcome) {
    Counter[] c = attempts.get(origin);
    if (c != null) {
      c[outcome.ordinal()].increment();
    }
  }

  /** Reason number {@code reason} without a request (for example a slow client's 408). */
  public void localRejection(int reason) {
    localRejections[reason].increment();
  }

  /** A half-open probe ended with {@code outcome}. */
  public void probe(CircuitBreaker b, Outcome outcome) {
    probeCounters(b.keyText())[outcome.kind().ordinal()].increment();
  }

  private Counter[] probeCounters(String breaker) {
    return probes.computeIfAbsent(
        breaker,
        key -> {
          Counter[] byKind = new Counter[Outcome.Kind.values().length];
          for (Outcome.Kind k : Outcome.Kind.values()) {
            byKind[k.ordinal()] =
                Counter.builder("parapet.probes")
                    .description("Half-open probes by result")
                    .tag("breaker", key)
                    .tag("result", lower(k.name()))
                    .register(registry);
          }
          return byKind;
        });
  }

  /**
   * Registers the state gauge of a breaker (called when the registry creates it). After a reload
   * that replaced a breaker, the gauge follows the new one.
   */
  public void breakerCreated(CircuitBreaker b) {
    String key = b.keyText();
    if (breakers.put(key, b) == null) {
      Gauge.builder(
              "parapet.breaker.state",
              breakers,
              m -> {
                CircuitBreaker current = m.get(key);
                return current == null ? Double.NaN : current.state().gaugeValue();
              })
          .description("0 closed, 1 open, 2 half-open, 3 ramping, 4 forced open, 5 disabled")
          .tag("breaker", key)
          .register(registry);
      Gauge.builder("parapet.breaker.open.seconds", episodes, e -> e.openSeconds(key))
          .description(
              "Seconds since the breaker stopped traffic (entered open; half-open probes continue it), 0 while traffic flows")
          .tag("breaker", key)
          .register(registry);
      Gauge.builder(
              "parapet.breaker.flapping",
              breakers,
              m -> {
                CircuitBreaker current = m.get(key);
                return current == null ? Double.NaN : current.isFlapping() ? 1 : 0;
              })
          .description("1 while the breaker opens more often than its flapping threshold")
          .tag("breaker", key)
          .register(registry);
      opensCounter(key);
      probeCounters(key);
    }
    // A new breaker starts closed: an episode of the one it replaced (a reload) ends here.
    episodes.started(key, b.state());
  }

  private Counter opensCounter(String key) {
    return opens.computeIfAbsent(
        key,
        k ->
            Counter.builder("parapet.breaker.opens")
                .description(
                    "Entries into open or forced open, re-opens after a failed probe included (what the flapping detector counts)")
                .tag("breaker", k)
                .register(registry));
  }

  /**
   * Registers a gauge over something configuration names (in-flight requests, connections). After a
   * reload the same name and label follow the new {@code value}.
   */
  public void gauge(String name, String labelName, String labelValue, Supplier<Number> value) {
    String id = name + "|" + labelName + "|" + labelValue;
    AtomicReference<Supplier<Number>> previous =
        gauges.putIfAbsent(id, new AtomicReference<>(value));
    if (previous != null) {
      previous.set(value);
      return;
    }
    AtomicReference<Supplier<Number>> ref = gauges.get(id);
    Gauge.builder(
            name,
            ref,
            r -> {
              Supplier<Number> current = r.get();
              return current == null ? Double.NaN : current.get().doubleValue();
            })
        .tag(labelName, labelValue)
        .strongReference(true)
        .register(registry);
  }

  /**
   * Counts one event of a family with two labels (retries, hedges, shedding). Label values must
   * come from configuration or a closed set (origin names, priority classes, enum names), never
   * from request data. Off the per-request fast path: only requests that retry, hedge or are shed
   * come here.
   */
  public void count(String name, String label1, String value1, String label2, String value2) {
    counter(name, label1, value1, label2, value2).increment();
  }

  /**
   * Registers a counter of such a family at zero, so dashboards and alerts see the series before
   * its first event.
   */
  public void declare(String name, String label1, String value1, String label2, String value2) {
    counter(name, label1, value1, label2, value2);
  }

  private Counter counter(String name, String label1, String value1, String label2, String value2) {
    String id = name + '|' + value1 + '|' + value2;
    Counter c = events.get(id);
    if (c == null) {
      c =
          events.computeIfAbsent(
              id,
              k ->
                  Counter.builder(name).tag(label1, value1).tag(label2, value2).register(registry));
    }
    return c;
  }

  /**
   * A failure or slow call is about to be recorded by breaker {@code key}: it starts an episode
   * unless one started within the last {@link #EPISODE_GAP_NANOS}. Only failures come here.
   */
  public void failureSeen(BreakerKey key, long nowNanos) {
    AtomicLong first = firstFailure.computeIfAbsent(key, k -> new AtomicLong(nowNanos));
    long seen = first.get();
    if (nowNanos - seen > EPISODE_GAP_NANOS) {
      first.compareAndSet(seen, nowNanos);
    }
  }

  /** An episode older than this (the default window) is not the one that opened the breaker. */
  static final long EPISODE_GAP_NANOS = 10_000_000_000L;

  @Override
  public void onTransition(TransitionEvent e) {
    String breaker = e.key().toString();
    episodes.transition(breaker, e.to(), e.nowNanos());
    if (e.to() == State.OPEN || e.to() == State.FORCED_OPEN) {
      opensCounter(breaker).increment();
    }
    if (e.to() == State.OPEN && e.from() == State.CLOSED) {
      AtomicLong first = firstFailure.remove(e.key());
      if (first != null && e.nowNanos() - first.get() <= EPISODE_GAP_NANOS) {
        timeToOpen.record(Math.max(0, e.nowNanos() - first.get()), TimeUnit.NANOSECONDS);
      }
    }
    String key = e.key() + "|" + e.from() + "|" + e.to() + "|" + e.reason();
    transitions
        .computeIfAbsent(
            key,
            k ->
                Counter.builder("parapet.breaker.transitions")
                    .description("Breaker state changes")
                    .tag("breaker", e.key().toString())
                    .tag("from", lower(e.from().name()))
                    .tag("to", lower(e.to().name()))
                    .tag("reason", lower(e.reason().name()))
                    .register(registry))
        .increment();
  }

  /** The Prometheus text exposition. */
  /**
   * One cache status ({@code parapet_cache_total{status}}); {@code status} comes from a closed enum
   * (the cache's {@code Status} labels), never from request data.
   */
  public void cache(String status) {
    cacheCounter(status).increment();
  }

  /** Registers {@code parapet_cache_total{status}} at zero. */
  public void declareCache(String status) {
    cacheCounter(status);
  }

  private Counter cacheCounter(String status) {
    return cacheTotals.computeIfAbsent(
        status,
        s ->
            Counter.builder("parapet.cache")
                .description("Requests by what the edge cache did, and cache events")
                .tag("status", s)
                .register(registry));
  }

  public String scrape() {
    return registry.scrape();
  }

  /** The registry itself, for readers that go by metric name (the admin dashboard's sampler). */
  public MeterRegistry registry() {
    return registry;
  }

  private static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }
}
