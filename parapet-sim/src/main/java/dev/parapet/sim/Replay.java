package dev.parapet.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Decision;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.Permit;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.breaker.TransitionEvent;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.outcome.OutcomeClassifier;
import dev.parapet.core.outcome.SlowCallThreshold;
import java.io.BufferedReader;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Shadow replay of an access log: what a breaker policy would have done (DESIGN "Shadow mode:
 * compute and log everything, reject nothing": tuning in shadow before enforcing).
 *
 * <p>How it works. Each record (time, route, status, latency) is a request that starts at {@code
 * time} and completes {@code latency} later; both are events on the {@link Engine}, so the real
 * {@link CircuitBreaker} of the record's route — one per route, in {@link Mode#SHADOW} — sees
 * admissions and outcomes in the order they happened, with real probe latencies. The outcome is
 * classified by the core's {@link OutcomeClassifier} (500/502/503/504/429 fail; slower than the
 * slow threshold is slow); status 0 means no response (a timeout). A request the breaker admits
 * only because it is in shadow mode ({@link Decision#SHADOW_PERMITTED}) is one it would have
 * rejected.
 *
 * <p>Input: CSV with a header naming {@code time,route,status,latency_ms} (any order), or JSON
 * lines with those fields. {@code time} is seconds since the epoch (fractions allowed; values above
 * 10^11 are taken as milliseconds) or an ISO-8601 instant. Records need not be sorted.
 */
final class Replay {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final int MAX_ROUTES = 10_000;

  record LogRecord(long timeNanos, String route, int status, long latencyNanos) {}

  /** A breaker transition, for the timeline. */
  record StateChange(long nanos, State to) {}

  static final int MAX_BINS = 2000;
  static final int MAX_STATE_CHANGES = 100_000;

  /** What the policy would have done on one route. */
  static final class RouteResult {
    final String route;
    long requests;
    long failures;
    long slow;
    long wouldReject;
    long opens;
    long firstOpenNanos = -1;
    final List<String> transitions = new ArrayList<>();
    final List<StateChange> states = new ArrayList<>();
    // Per time bin (binSeconds wide, at most MAX_BINS of them), counted at the request's start.
    final long binSeconds;
    final long[] binRequests;
    final long[] binFailures;
    final long[] binReject;

    RouteResult(String route, long binSeconds, int bins) {
      this.route = route;
      this.binSeconds = binSeconds;
      this.binRequests = new long[bins];
      this.binFailures = new long[bins];
      this.binReject = new long[bins];
    }

    void count(long nowNanos, boolean failure, boolean reject) {
      int bin = (int) Math.min(binRequests.length - 1, nowNanos / (binSeconds * 1_000_000_000L));
      binRequests[bin]++;
      if (failure) {
        binFailures[bin]++;
      }
      if (reject) {
        binReject[bin]++;
      }
    }

    double rejectShare() {
      return requests == 0 ? 0 : (double) wouldReject / requests;
    }
  }

  private Replay() {}

  /** Parses a log; errors name the line. */
  static List<LogRecord> parse(BufferedReader in, String source)
      throws IOException, ConfigException {
    List<LogRecord> out = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    String line;
    int lineNo = 0;
    int[] cols = null;
    long base = Long.MIN_VALUE;
    while ((line = in.readLine()) != null) {
      lineNo++;
      String t = line.strip();
      if (t.isEmpty() || t.startsWith("#")) {
        continue;
      }
      try {
        String time;
        String route;
        String status;
        String latency;
        if (t.startsWith("{")) {
          JsonNode n = JSON.readTree(t);
          time = field(n, "time");
          route = field(n, "route");
          status = field(n, "status");
          latency = n.has("latency_ms") ? field(n, "latency_ms") : field(n, "latency");
        } else {
          String[] f = t.split(",", -1);
          if (cols == null) {
            cols = header(f);
            continue;
          }
          if (f.length < 4) {
            throw new IllegalArgumentException("expected 4 fields, found " + f.length);
          }
          time = f[cols[0]].strip();
          route = f[cols[1]].strip();
          status = f[cols[2]].strip();
          latency = f[cols[3]].strip();
        }
        long abs = parseTime(time);
        if (base == Long.MIN_VALUE) {
          base = abs;
        }
        double latencyMs = Double.parseDouble(latency);
        if (!(latencyMs >= 0)) {
          throw new IllegalArgumentException("latency_ms : " + latency + " (expected: >= 0)");
        }
        int code = Integer.parseInt(status);
        if (code < 0 || code > 999) {
          throw new IllegalArgumentException("status : " + status + " (expected: 0 or 100-999)");
        }
        out.add(new LogRecord(abs - base, route, code, (long) (latencyMs * 1_000_000)));
      } catch (IOException | RuntimeException e) {
        errors.add(source + ":" + lineNo + ": " + e.getMessage());
        if (errors.size() >= 20) {
          break;
        }
      }
    }
    if (!errors.isEmpty()) {
      throw new ConfigException(source, errors);
    }
    // Records may be written at completion, out of start order: the engine orders them anyway, and
    // the smallest time becomes zero.
    long min = out.stream().mapToLong(LogRecord::timeNanos).min().orElse(0);
    if (min < 0) {
      List<LogRecord> shifted = new ArrayList<>(out.size());
      for (LogRecord r : out) {
        shifted.add(new LogRecord(r.timeNanos() - min, r.route(), r.status(), r.latencyNanos()));
      }
      return shifted;
    }
    return out;
  }

  private static String field(JsonNode n, String name) {
    JsonNode f = n.get(name);
    if (f == null || f.isNull()) {
      throw new IllegalArgumentException(name + " : missing (expected: a value)");
    }
    return f.asText();
  }

  private static int[] header(String[] f) {
    int[] cols = {-1, -1, -1, -1};
    String[] names = {"time", "route", "status", "latency_ms"};
    for (int i = 0; i < f.length; i++) {
      String h = f[i].strip().toLowerCase(Locale.ROOT);
      for (int k = 0; k < names.length; k++) {
        if (h.equals(names[k]) || (k == 3 && h.equals("latency"))) {
          cols[k] = i;
        }
      }
    }
    for (int k = 0; k < names.length; k++) {
      if (cols[k] < 0) {
        throw new IllegalArgumentException(
            "header : "
                + String.join(",", f)
                + " (expected: columns time,route,status,latency_ms)");
      }
    }
    return cols;
  }

  static long parseTime(String s) {
    try {
      double v = Double.parseDouble(s);
      double seconds = v > 1e11 ? v / 1000.0 : v;
      return Math.round(seconds * 1e9);
    } catch (NumberFormatException e) {
      try {
        Instant i = Instant.parse(s);
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
      } catch (DateTimeParseException e2) {
        throw new IllegalArgumentException(
            "time : " + s + " (expected: epoch seconds or an ISO-8601 instant)", e2);
      }
    }
  }

  /** Replays {@code records} through one shadow breaker per route. */
  static Map<String, RouteResult> run(
      List<LogRecord> records, BreakerPolicy policy, Duration slow) {
    BreakerPolicy shadow = policy.toBuilder().mode(Mode.SHADOW).build();
    OutcomeClassifier classifier =
        OutcomeClassifier.standard().withSlowCalls(SlowCallThreshold.absolute(slow));
    Engine engine = new Engine(0);
    long lastNanos = 0;
    for (LogRecord rec : records) {
      lastNanos = Math.max(lastNanos, rec.timeNanos());
    }
    long spanSeconds = lastNanos / 1_000_000_000L + 1;
    long binSeconds = Math.max(1, (spanSeconds + MAX_BINS - 1) / MAX_BINS);
    int bins = (int) ((spanSeconds + binSeconds - 1) / binSeconds);
    Map<String, RouteResult> results = new TreeMap<>();
    Map<String, CircuitBreaker> breakers = new TreeMap<>();
    for (LogRecord rec : records) {
      RouteResult rr = results.get(rec.route());
      if (rr == null) {
        if (results.size() >= MAX_ROUTES) {
          throw new IllegalArgumentException(
              "routes : more than " + MAX_ROUTES + " (expected: a bounded set of route names)");
        }
        RouteResult created = new RouteResult(rec.route(), binSeconds, bins);
        rr = created;
        results.put(rec.route(), created);
        BreakerListener listener =
            new BreakerListener() {
              @Override
              public void onTransition(TransitionEvent e) {
                if (e.to() == State.OPEN) {
                  created.opens++;
                  if (created.firstOpenNanos < 0) {
                    created.firstOpenNanos = e.nowNanos();
                  }
                }
                if (created.states.size() < MAX_STATE_CHANGES) {
                  created.states.add(new StateChange(e.nowNanos(), e.to()));
                }
                if (created.transitions.size() < 50) {
                  created.transitions.add(
                      String.format(
                          Locale.ROOT,
                          "%.3fs %s -> %s (%s, %d calls, failure rate %.1f%%, slow rate %.1f%%)",
                          e.nowNanos() / 1e9,
                          e.from(),
                          e.to(),
                          e.reason(),
                          e.observations(),
                          e.failureRate() * 100,
                          e.slowRate() * 100));
                }
              }
            };
        breakers.put(
            rec.route(),
            new CircuitBreaker(
                BreakerKey.of(Scope.ROUTE, rec.route()), shadow, engine.random(), listener, 0));
      }
      CircuitBreaker b = breakers.get(rec.route());
      if (b == null) {
        throw new IllegalStateException("breaker for " + rec.route() + " missing");
      }
      engine.schedule(new Start(engine, b, rr, rec, classifier), rec.timeNanos());
    }
    engine.runUntil(Long.MAX_VALUE / 4);
    return results;
  }

  private static final class Start extends SimEvent {
    private final Engine engine;
    private final CircuitBreaker breaker;
    private final RouteResult result;
    private final LogRecord rec;
    private final OutcomeClassifier classifier;
    private final Permit permit = new Permit();
    private boolean started;
    private Outcome outcome = Outcome.SUCCESS;

    Start(
        Engine engine,
        CircuitBreaker breaker,
        RouteResult result,
        LogRecord rec,
        OutcomeClassifier classifier) {
      this.engine = engine;
      this.breaker = breaker;
      this.result = result;
      this.rec = rec;
      this.classifier = classifier;
    }

    @Override
    void fire(long now) {
      if (started) {
        permit.onOutcome(outcome, now);
        return;
      }
      started = true;
      result.requests++;
      Decision d = breaker.tryAcquire(permit, now);
      if (d == Decision.SHADOW_PERMITTED) {
        result.wouldReject++;
      }
      outcome =
          rec.status() == 0
              ? Outcome.TIMEOUT
              : classifier.classifyResponse(rec.status(), rec.latencyNanos(), now);
      if (outcome.isFailure()) {
        result.failures++;
      } else if (outcome == Outcome.SLOW) {
        result.slow++;
      }
      result.count(now, outcome.isFailure(), d == Decision.SHADOW_PERMITTED);
      if (d.isPermitted()) {
        engine.schedule(this, now + rec.latencyNanos());
      }
    }
  }

  /** The per-route report. */
  static String report(Map<String, RouteResult> results, BreakerPolicy policy) {
    StringBuilder out = new StringBuilder();
    out.append("shadow replay (the policy runs in shadow mode whatever its mode), policy: ")
        .append(policy)
        .append('\n');
    out.append(
        String.format(
            Locale.ROOT,
            "%-24s %10s %9s %9s %12s %6s %12s %8s%n",
            "route",
            "requests",
            "failures",
            "slow",
            "first open",
            "opens",
            "would reject",
            "share"));
    for (RouteResult r : results.values()) {
      out.append(
          String.format(
              Locale.ROOT,
              "%-24s %10d %9d %9d %12s %6d %12d %7.2f%%%n",
              r.route,
              r.requests,
              r.failures,
              r.slow,
              r.firstOpenNanos < 0
                  ? "never"
                  : String.format(Locale.ROOT, "%.3fs", r.firstOpenNanos / 1e9),
              r.opens,
              r.wouldReject,
              r.rejectShare() * 100));
    }
    for (RouteResult r : results.values()) {
      if (!r.transitions.isEmpty()) {
        out.append("transitions ").append(r.route).append(" (seconds from the first record):\n");
        for (String t : r.transitions) {
          out.append("  ").append(t).append('\n');
        }
      }
    }
    return out.toString();
  }
}
