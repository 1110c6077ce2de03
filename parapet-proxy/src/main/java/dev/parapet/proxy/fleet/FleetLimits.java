package dev.parapet.proxy.fleet;

import dev.parapet.core.fleet.FleetLimitListener;
import dev.parapet.core.fleet.FleetLimitSettings;
import dev.parapet.core.fleet.FleetLimiter;
import dev.parapet.core.fleet.FleetMode;
import dev.parapet.core.fleet.LeaseSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.FleetLimitConfig;
import dev.parapet.proxy.metrics.ProxyMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fleet ceilings of one proxy, by origin: each a {@link FleetLimiter} over a {@link
 * RedisLeaseSource}, kept across reloads while its configuration is unchanged (a new one would
 * start without a lease and forget its mode). While there are any, one timer thread ticks them
 * every {@link #TICK_MILLIS} ms (a late lease is noticed, and Redis probed while falling back, even
 * when no request comes); each mode change is one log line; metrics follow the current limiter of
 * each origin and keep counting across a replacement.
 */
public final class FleetLimits implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FleetLimits.class);
  static final long TICK_MILLIS = 20;

  /** Makes the shared bucket for one origin; Redis unless a test says otherwise. */
  @FunctionalInterface
  public interface Sources {
    Sources REDIS =
        (origin, c) ->
            new RedisLeaseSource(
                c.redis(), c.key(), c.ratePerSecond(), c.burst(), "parapet-fleet-" + origin);

    LeaseSource open(String origin, FleetLimitConfig config);
  }

  private record Entry(FleetLimitConfig config, FleetLimiter limiter, LeaseSource source) {}

  private final Ticker ticker;
  private final Sources sources;

  /** Ticks the limiters while there are any: a proxy without fleet ceilings runs no thread. */
  private @Nullable ScheduledExecutorService timer;

  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private final Map<String, OriginMeters> meters = new ConcurrentHashMap<>();
  private volatile @Nullable MeterRegistry registry;

  private FleetLimits(Ticker ticker, Sources sources) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.sources = Objects.requireNonNull(sources, "sources");
  }

  /** Whether the tick thread runs. */
  synchronized boolean ticking() {
    return timer != null;
  }

  /** Starts the tick thread when there are limiters and none runs; stops it when there are none. */
  private void timerFor(boolean limiters) {
    ScheduledExecutorService t = timer;
    if (limiters && t == null) {
      t =
          Executors.newSingleThreadScheduledExecutor(r -> {
            Thread th = new Thread(r, "parapet-fleet-tick");
            th.setDaemon(true);
            return th;
          });
      t.scheduleWithFixedDelay(this::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
      timer = t;
    } else if (!limiters && t != null) {
      t.shutdownNow();
      timer = null;
    }
  }

  /** Limits over Redis. */
  public static FleetLimits start(Ticker ticker) {
    return new FleetLimits(ticker, Sources.REDIS);
  }

  /** Limits over other sources (tests). */
  public static FleetLimits start(Ticker ticker, Sources sources) {
    return new FleetLimits(ticker, sources);
  }

  /**
   * The limiters for {@code configs} (by origin name): an unchanged one is kept, a new or changed
   * one starts (and asks for its first lease at once); limiters no longer configured are closed.
   */
  public synchronized Map<String, FleetLimiter> reconcile(Map<String, FleetLimitConfig> configs) {
    Map<String, FleetLimiter> out = new LinkedHashMap<>();
    Map<String, Entry> next = new HashMap<>();
    for (Map.Entry<String, FleetLimitConfig> e : configs.entrySet()) {
      String origin = e.getKey();
      FleetLimitConfig c = e.getValue();
      Entry old = entries.get(origin);
      Entry entry = old != null && old.config().equals(c) ? old : open(origin, c);
      next.put(origin, entry);
      out.put(origin, entry.limiter());
    }
    for (Map.Entry<String, Entry> e : entries.entrySet()) {
      if (next.get(e.getKey()) != e.getValue()) {
        OriginMeters m = meters.get(e.getKey());
        if (m != null) {
          m.retire(e.getValue().limiter());
        }
        closeQuietly(e.getValue().source());
      }
    }
    entries.clear();
    entries.putAll(next);
    timerFor(!next.isEmpty());
    MeterRegistry r = registry;
    for (Map.Entry<String, Entry> e : next.entrySet()) {
      meters(e.getKey()).current = e.getValue().limiter();
    }
    if (r != null) {
      next.keySet().forEach(o -> register(r, o));
    }
    return out;
  }

  /** Reports every origin's mode and counters in {@code metrics} (now and after reloads). */
  public void bind(ProxyMetrics metrics) {
    MeterRegistry r = metrics.registry();
    registry = r;
    for (String origin : entries.keySet()) {
      register(r, origin);
    }
  }

  /** The limiter of {@code origin}, or null when it has no fleet ceiling. */
  public @Nullable FleetLimiter limiter(String origin) {
    Entry e = entries.get(origin);
    return e == null ? null : e.limiter();
  }

  /** Each origin's mode, for the admin API. */
  public Map<String, FleetMode> modes() {
    Map<String, FleetMode> m = new LinkedHashMap<>();
    entries.forEach((o, e) -> m.put(o, e.limiter().mode()));
    return m;
  }

  private Entry open(String origin, FleetLimitConfig c) {
    FleetLimitSettings s =
        c.lease() == null
            ? FleetLimitSettings.of(c.ratePerSecond(), c.burst(), c.instances(), c.timeout())
            : FleetLimitSettings.of(
                c.ratePerSecond(), c.burst(), c.instances(), c.timeout(), c.lease());
    LeaseSource source = sources.open(origin, c);
    FleetLimiter limiter = new FleetLimiter(s, source, ticker, logTo(origin, c));
    limiter.tick(ticker.read());
    return new Entry(c, limiter, source);
  }

  private static FleetLimitListener logTo(String origin, FleetLimitConfig c) {
    return (from, to, reason, now) -> {
      if (to == FleetMode.LOCAL_FALLBACK) {
        LOG.warn(
            "fleet limit of origin {}: {} -> {} ({}); keeping this proxy's share, {}/s of {}/s",
            origin,
            lower(from),
            lower(to),
            reason,
            String.format(Locale.ROOT, "%.1f", c.ratePerSecond() / c.instances()),
            String.format(Locale.ROOT, "%.1f", c.ratePerSecond()));
      } else {
        LOG.info(
            "fleet limit of origin {}: {} -> {} ({}); the ceiling is shared again",
            origin,
            lower(from),
            lower(to),
            reason);
      }
    };
  }

  private void tick() {
    long now = ticker.read();
    for (Entry e : entries.values()) {
      try {
        e.limiter().tick(now);
      } catch (RuntimeException ex) {
        LOG.warn("fleet limit tick failed", ex);
      }
    }
  }

  @Override
  public synchronized void close() {
    timerFor(false);
    entries.values().forEach(e -> closeQuietly(e.source()));
    entries.clear();
  }

  private static void closeQuietly(LeaseSource s) {
    if (s instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.debug("closing a lease source failed", e);
      }
    }
  }

  private static String lower(FleetMode m) {
    return m.name().toLowerCase(Locale.ROOT);
  }

  // ---------------------------------------------------------------------------------------------
  // Metrics that follow an origin's current limiter

  private OriginMeters meters(String origin) {
    return meters.computeIfAbsent(origin, o -> new OriginMeters());
  }

  /** The current limiter of one origin and what replaced ones had counted. */
  private static final class OriginMeters {
    volatile @Nullable FleetLimiter current;
    final Map<String, Long> retired = new ConcurrentHashMap<>();
    volatile boolean registered;

    synchronized void retire(FleetLimiter old) {
      FleetLimiter.Stats s = old.stats();
      for (Map.Entry<String, ToLongFunction<FleetLimiter.Stats>> c : COUNTERS.entrySet()) {
        retired.merge(c.getKey(), c.getValue().applyAsLong(s), Long::sum);
      }
    }

    double count(String name) {
      FleetLimiter l = current;
      long now = l == null ? 0 : COUNTERS.get(name).applyAsLong(l.stats());
      return now + retired.getOrDefault(name, 0L);
    }

    double mode() {
      FleetLimiter l = current;
      return l == null ? Double.NaN : l.mode() == FleetMode.SHARED ? 1 : 0;
    }
  }

  private static final Map<String, ToLongFunction<FleetLimiter.Stats>> COUNTERS =
      Map.of(
          "granted_shared", FleetLimiter.Stats::grantedShared,
          "granted_local", FleetLimiter.Stats::grantedLocal,
          "refused", FleetLimiter.Stats::refused,
          "leases", FleetLimiter.Stats::leases,
          "redis_errors", FleetLimiter.Stats::sourceErrors,
          "redis_timeouts", FleetLimiter.Stats::sourceTimeouts);

  private void register(MeterRegistry r, String origin) {
    OriginMeters m = meters(origin);
    synchronized (m) {
      if (m.registered) {
        return;
      }
      m.registered = true;
    }
    io.micrometer.core.instrument.Gauge.builder("parapet.fleet.shared", m, OriginMeters::mode)
        .description(
            "1 while the origin's fleet ceiling is kept in Redis with the fleet, 0 while this proxy keeps its local share (Redis slow or down)")
        .tag("origin", origin)
        .strongReference(true)
        .register(r);
    counter(
        r,
        m,
        origin,
        "parapet.fleet.tokens",
        "result",
        "granted_shared",
        "Attempts let through by the fleet ceiling or refused, by where the token came from");
    counter(
        r,
        m,
        origin,
        "parapet.fleet.tokens",
        "result",
        "granted_local",
        "Attempts let through by the fleet ceiling or refused, by where the token came from");
    counter(
        r,
        m,
        origin,
        "parapet.fleet.tokens",
        "result",
        "refused",
        "Attempts let through by the fleet ceiling or refused, by where the token came from");
    counter(
        r,
        m,
        origin,
        "parapet.fleet.leases",
        null,
        "leases",
        "Leases of tokens that came back from Redis");
    counter(
        r,
        m,
        origin,
        "parapet.fleet.redis.errors",
        null,
        "redis_errors",
        "Leases that failed (Redis down, refused, script error)");
    counter(
        r,
        m,
        origin,
        "parapet.fleet.redis.timeouts",
        null,
        "redis_timeouts",
        "Leases not back within fleet_limit.timeout");
  }

  private static void counter(
      MeterRegistry r,
      OriginMeters m,
      String origin,
      String name,
      @Nullable String label,
      String stat,
      String description) {
    FunctionCounter.Builder<OriginMeters> b =
        FunctionCounter.builder(name, m, x -> x.count(stat))
            .description(description)
            .tag("origin", origin);
    if (label != null) {
      b.tag(label, stat);
    }
    b.register(r);
  }
}
