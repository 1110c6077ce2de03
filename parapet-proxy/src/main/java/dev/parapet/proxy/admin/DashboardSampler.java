package dev.parapet.proxy.admin;

import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.proxy.http.ProxyError;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Statistic;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.NamingConvention;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Turns the proxy's Micrometer registry and its breakers into one {@link Sample} per second, kept
 * in a bounded ring (the last {@link #CAPACITY} samples), for the live dashboard.
 *
 * <p>How it reads: every meter is matched by its Prometheus name as DESIGN.md spells it ({@code
 * parapet_requests_total}, {@code parapet_shed_total}, ...), never by a Java reference, so meters
 * that other parts of the proxy register later (stale serving, shedding, the concurrency limit)
 * appear on the dashboard the moment they exist; until then their series are absent and the page
 * shows "n/a". Counters become rates by the difference between two samples; the latency quantiles
 * come from the difference of the request-duration histogram's buckets, so p50 and p99 are those of
 * the last second, not of the whole run.
 *
 * <p>A request's {@code outcome} label is grouped for the page: {@code fresh} (the origin answered:
 * success or slow), {@code stale}, {@code shed}, {@code 503} and {@code 504} (answers the proxy
 * made itself with that status, by {@link ProxyError}), and {@code other} (origin errors passed on,
 * 502s, client cancellations, ...).
 *
 * <p>Not thread-safe by itself: {@link #sample} runs on one thread (the admin event loop); readers
 * take {@link #since} under the ring's lock.
 */
final class DashboardSampler {
  /** Samples kept: five minutes at one per second. */
  static final int CAPACITY = 300;

  /** The outcome groups, in the order the page stacks them. */
  static final List<String> GROUPS = List.of("fresh", "stale", "shed", "503", "504", "other");

  static final String REQUESTS = "parapet_requests";
  static final String ATTEMPTS = "parapet_origin_attempts";
  static final String SHED = "parapet_shed";
  static final String CACHE = "parapet_cache";
  static final String LIMIT = "parapet_concurrency_limit";
  static final String INFLIGHT = "parapet_inflight";
  static final String ORIGIN_INFLIGHT = "parapet_origin_inflight";
  static final String QUEUE = "parapet_queue_depth";
  static final String DURATION = "parapet_request_duration";

  /**
   * About one second of the proxy ({@code seconds} exactly, since the previous sample). Rates are
   * per second; a null value means the metric does not exist (yet) in this proxy.
   */
  record Sample(
      long seq,
      long epochMillis,
      double seconds,
      Map<String, Double> requests,
      double attempts,
      double attemptsFailed,
      @Nullable Double p50Millis,
      @Nullable Double p99Millis,
      @Nullable Double limit,
      @Nullable Double inflight,
      @Nullable Double queue,
      @Nullable Map<String, Double> shedByPriority,
      Map<String, String> breakers) {}

  private final MeterRegistry registry;
  private final NamingConvention convention;
  private final Supplier<Collection<CircuitBreaker>> breakers;
  private final ArrayDeque<Sample> ring = new ArrayDeque<>(CAPACITY);
  private final Map<Meter.Id, Double> lastCounts = new HashMap<>();
  private final Map<Meter.Id, double[]> lastBuckets = new HashMap<>();
  private long lastNanos;
  private long seq;
  private boolean primed;

  DashboardSampler(MeterRegistry registry, Supplier<Collection<CircuitBreaker>> breakers) {
    this.registry = registry;
    this.convention = registry.config().namingConvention();
    this.breakers = breakers;
  }

  /**
   * Reads every meter once. The first call only sets the baseline (a counter's total since start is
   * not a rate); every later call appends a sample.
   */
  void sample(long epochMillis, long nowNanos) {
    double seconds = primed ? Math.max(1e-3, (nowNanos - lastNanos) / 1e9) : 1;
    Map<String, Double> groups = new LinkedHashMap<>();
    for (String g : GROUPS) {
      groups.put(g, 0.0);
    }
    double attempts = 0;
    double attemptsFailed = 0;
    double stale = 0;
    boolean staleOutcome = false;
    double cacheStale = 0;
    Double limit = null;
    Double inflight = null;
    double originInflight = 0;
    boolean anyOriginInflight = false;
    Double queue = null;
    Map<String, Double> shed = null;
    double shedTotal = 0;
    boolean shedOutcome = false;
    TreeMap<Double, Double> buckets = new TreeMap<>();
    for (Meter m : registry.getMeters()) {
      Meter.Id id = m.getId();
      String name = baseName(id);
      switch (name) {
        case REQUESTS -> {
          double d = delta(id, count(m));
          String outcome = tag(id, "outcome");
          String group = group(outcome);
          if (group.equals("stale")) {
            staleOutcome = true;
          }
          if (group.equals("shed")) {
            shedOutcome = true;
          }
          groups.merge(group, d, Double::sum);
        }
        case ATTEMPTS -> {
          double d = delta(id, count(m));
          attempts += d;
          String result = tag(id, "result");
          if (!result.equals("success") && !result.equals("slow")) {
            attemptsFailed += d;
          }
        }
        case SHED -> {
          double d = delta(id, count(m));
          if (shed == null) {
            shed = new TreeMap<>();
          }
          String priority = tag(id, "priority");
          shed.merge(priority.isEmpty() ? "?" : priority, d, Double::sum);
          shedTotal += d;
        }
        case CACHE -> {
          double d = delta(id, count(m));
          if (tag(id, "status").contains("stale")) {
            cacheStale += d;
          }
        }
        case LIMIT -> limit = sum(limit, value(m));
        case INFLIGHT -> inflight = sum(inflight, value(m));
        case ORIGIN_INFLIGHT -> {
          originInflight += value(m);
          anyOriginInflight = true;
        }
        case QUEUE -> queue = sum(queue, value(m));
        case DURATION -> {
          if (m instanceof Timer t) {
            addBuckets(id, t, buckets);
          }
        }
        default -> {}
      }
    }
    // Stale and shed answers may be counted as request outcomes or only by their own counters:
    // whichever exists, without counting twice.
    if (!staleOutcome) {
      groups.merge("stale", cacheStale, Double::sum);
    }
    if (!shedOutcome) {
      groups.merge("shed", shedTotal, Double::sum);
    }
    if (inflight == null && anyOriginInflight) {
      inflight = originInflight;
    }
    Map<String, String> states = new TreeMap<>();
    for (CircuitBreaker b : breakers.get()) {
      states.put(b.key().toString(), b.state().name());
    }
    boolean append = primed;
    primed = true;
    lastNanos = nowNanos;
    if (!append) {
      return;
    }
    groups.replaceAll((k, v) -> v / seconds);
    if (shed != null) {
      shed.replaceAll((k, v) -> v / seconds);
    }
    Sample s =
        new Sample(
            ++seq,
            epochMillis,
            seconds,
            groups,
            attempts / seconds,
            attemptsFailed / seconds,
            quantileMillis(buckets, 0.50),
            quantileMillis(buckets, 0.99),
            limit,
            inflight,
            queue,
            shed,
            states);
    synchronized (ring) {
      if (ring.size() == CAPACITY) {
        ring.removeFirst();
      }
      ring.addLast(s);
    }
  }

  /** The samples newer than {@code afterSeq}, oldest first. */
  List<Sample> since(long afterSeq) {
    synchronized (ring) {
      List<Sample> out = new ArrayList<>();
      for (Sample s : ring) {
        if (s.seq() > afterSeq) {
          out.add(s);
        }
      }
      return out;
    }
  }

  /** Which group of the page a request's {@code outcome} label belongs to. */
  static String group(String outcome) {
    if (outcome.equals("success") || outcome.equals("slow")) {
      return "fresh";
    }
    if (outcome.contains("stale")) {
      return "stale";
    }
    if (outcome.contains("shed")) {
      return "shed";
    }
    try {
      int status = ProxyError.valueOf(outcome.toUpperCase(Locale.ROOT)).status().code();
      if (status == 503) {
        return "503";
      }
      if (status == 504) {
        return "504";
      }
    } catch (IllegalArgumentException e) {
      // An origin outcome (failure_status, timeout, ...) or a reason this page does not know.
    }
    return "other";
  }

  /** The Prometheus name without the type suffixes the convention adds. */
  private String baseName(Meter.Id id) {
    String n = id.getConventionName(convention);
    for (String suffix : new String[] {"_total", "_seconds"}) {
      if (n.endsWith(suffix)) {
        n = n.substring(0, n.length() - suffix.length());
      }
    }
    return n;
  }

  private static String tag(Meter.Id id, String key) {
    String v = id.getTag(key);
    return v == null ? "" : v;
  }

  private double delta(Meter.Id id, double total) {
    Double previous = lastCounts.put(id, total);
    // A counter first seen after the baseline started at zero within the last interval.
    double before = previous == null ? (primed ? 0 : total) : previous;
    return Math.max(0, total - before);
  }

  private static double count(Meter m) {
    for (Measurement x : m.measure()) {
      if (x.getStatistic() == Statistic.COUNT) {
        return x.getValue();
      }
    }
    return 0;
  }

  private static double value(Meter m) {
    for (Measurement x : m.measure()) {
      if (x.getStatistic() == Statistic.VALUE) {
        double v = x.getValue();
        return Double.isNaN(v) ? 0 : v;
      }
    }
    return 0;
  }

  private static Double sum(@Nullable Double a, double b) {
    return a == null ? b : a + b;
  }

  /**
   * Adds this timer's bucket counts since the last sample into {@code into} (upper bound in
   * nanoseconds to count in that bucket alone). Micrometer's bucket counts are cumulative.
   */
  private void addBuckets(Meter.Id id, Timer t, TreeMap<Double, Double> into) {
    CountAtBucket[] counts = t.takeSnapshot().histogramCounts();
    double[] now = new double[counts.length];
    for (int i = 0; i < counts.length; i++) {
      now[i] = counts[i].count();
    }
    double[] before = lastBuckets.put(id, now);
    if (!primed) {
      return;
    }
    double below = 0;
    for (int i = 0; i < counts.length; i++) {
      double cumulative = now[i] - (before == null || before.length != now.length ? 0 : before[i]);
      double inBucket = Math.max(0, cumulative - below);
      below = Math.max(below, cumulative);
      if (inBucket > 0) {
        into.merge(counts[i].bucket(TimeUnit.NANOSECONDS), inBucket, Double::sum);
      }
    }
  }

  /**
   * The bucket bound under which {@code q} of the interval's requests finished, or null if none.
   */
  private static @Nullable Double quantileMillis(TreeMap<Double, Double> buckets, double q) {
    double total = 0;
    for (double c : buckets.values()) {
      total += c;
    }
    if (total <= 0) {
      return null;
    }
    double target = q * total;
    double seen = 0;
    for (Map.Entry<Double, Double> e : buckets.entrySet()) {
      seen += e.getValue();
      if (seen >= target) {
        return e.getKey() / 1e6;
      }
    }
    return buckets.lastKey() / 1e6;
  }
}
