package dev.parapet.proxy.upstream;

import dev.parapet.core.balance.Host;
import dev.parapet.core.balance.HostHealth;
import dev.parapet.core.balance.HostSet;
import dev.parapet.core.balance.IpHashBalancer;
import dev.parapet.core.balance.LoadBalancer;
import dev.parapet.core.balance.RingHashBalancer;
import dev.parapet.core.balance.SlowStart;
import dev.parapet.core.latency.AdaptiveWait;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.outlier.OutlierDetector;
import dev.parapet.core.outlier.OutlierEvent;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.OriginConfig;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.cookie.Cookie;
import io.netty.handler.codec.http.cookie.ServerCookieDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;

/**
 * One configured origin pool: its hosts' connection pools, the balancer that picks a host per
 * attempt, passive outlier ejection, optional active health checks, and the pool-wide bound on
 * requests in flight ({@code limits.max_requests}).
 *
 * <pre>
 *  pick(key[, exclude]) ─► balancer over HostSet(hosts, both(outlier, health checks))
 *        │                     skips ejected / unhealthy hosts, slow-starts returned ones
 *        │null (every host out: "panic")
 *        ▼
 *  round robin over all hosts — better to try a host than to refuse the whole origin;
 *  the breaker still protects it
 *
 *  onAttemptOutcome(host, outcome) ─► OutlierDetector (consecutive 5xx, failure %, backoff,
 *                                     max_ejected)
 *  every 250 ms on an event loop  ─► OutlierDetector.advance: returns hosts whose time is up
 * </pre>
 *
 * <p>The balancer, the detector and the checker come from the core ({@code
 * dev.parapet.core.balance}, {@code dev.parapet.core.outlier}); this class only wires them to the
 * proxy's hosts and clock. Hosts are addressed by their index in the configured list. A reload
 * builds new pools, so ejections and health state start afresh with a new host list.
 */
public final class OriginPool {
  /** How often ejected hosts are checked for return (and failure percentages evaluated). */
  static final long ADVANCE_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

  private final OriginSettings settings;
  private final List<HostPool> hosts;
  private final Map<Host, HostPool> byHost;
  private final Ticker ticker;
  private final OutlierDetector outlier;
  private final @Nullable HealthChecker healthChecks;
  private final Class<? extends Channel> channelType;
  private final HostHealth health;
  private final SlowStart slowStart;
  private final LoadBalancer balancer;
  private final boolean ringHash;
  private final boolean ipHash;

  /** Health-blind ring over the same hosts: a key's shard is its owner when all are healthy. */
  private final @Nullable RingHashBalancer shards;

  private final AtomicLong panicCursor = new AtomicLong();
  private final AtomicLong panicPicks = new AtomicLong();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicIntegerArray ejections;
  private final ConcurrentHashMap<String, StaleWait> staleWaits = new ConcurrentHashMap<>();
  private @Nullable ScheduledFuture<?> advancing;

  /** A pool on the system clock with thread-local randomness. */
  public OriginPool(OriginSettings settings, Class<? extends Channel> channelType) {
    this(settings, channelType, Ticker.system(), RandomSource.threadLocal());
  }

  /**
   * @param ticker monotonic time for ejections and slow start
   * @param random for least request's two choices and health-check jitter
   */
  public OriginPool(
      OriginSettings settings,
      Class<? extends Channel> channelType,
      Ticker ticker,
      RandomSource random) {
    this.settings = settings;
    this.ticker = ticker;
    this.channelType = channelType;
    HostSelection sel = settings.selection();
    List<HostPool> hs = new ArrayList<>();
    int connectMillis =
        (int) Math.max(1, Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis()));
    List<InetSocketAddress> addresses = settings.hosts();
    for (int i = 0; i < addresses.size(); i++) {
      InetSocketAddress a = addresses.get(i);
      hs.add(
          new HostPool(
              settings.name() + "/" + a.getHostString() + ":" + a.getPort(),
              i,
              a,
              sel.weight(i),
              settings.maxConnections(),
              settings.maxPending(),
              connectMillis,
              channelType,
              ticker,
              settings.tls()));
    }
    this.hosts = List.copyOf(hs);
    Map<Host, HostPool> map = new IdentityHashMap<>();
    List<Host> balancerHosts = new ArrayList<>();
    for (HostPool h : hosts) {
      map.put(h.balancerHost(), h);
      balancerHosts.add(h.balancerHost());
    }
    this.byHost = map;
    this.ejections = new AtomicIntegerArray(hosts.size());
    this.outlier =
        new OutlierDetector(hosts.size(), sel.outlier(), this::onOutlierEvent, ticker.read());
    HostSelection.HealthCheck hc = sel.healthCheck();
    this.healthChecks =
        hc == null
            ? null
            : new HealthChecker(settings.name(), hosts, hc, channelType, ticker, random);
    this.health = healthChecks == null ? outlier : HostHealth.both(outlier, healthChecks);
    this.slowStart = sel.slowStart().isZero() ? SlowStart.NONE : SlowStart.of(sel.slowStart());
    HostSet set = HostSet.of(balancerHosts, health);
    this.balancer = LoadBalancer.of(sel.balancer(), set, slowStart, random);
    this.ringHash = sel.balancer().equals("ring_hash");
    this.ipHash = sel.balancer().equals("ip_hash");
    this.shards = ringHash ? new RingHashBalancer(HostSet.of(balancerHosts), SlowStart.NONE) : null;
  }

  public OriginSettings settings() {
    return settings;
  }

  public String name() {
    return settings.name();
  }

  public List<HostPool> hosts() {
    return hosts;
  }

  /** The configured balancer's name. */
  public String balancerName() {
    return settings.selection().balancer();
  }

  // ---- picking

  /**
   * The affinity key of a request for this pool's balancer: the hash of the path for {@code
   * ring_hash}, of the client address for {@code ip_hash}, 0 for the others (they ignore it).
   *
   * @param path the request path (without the query)
   * @param clientIp the client's address as text, or null when unknown
   */
  public long hashKey(String path, @Nullable String clientIp) {
    return hashKey(path, clientIp, null);
  }

  /**
   * The affinity key with the request's headers, for a {@code ring_hash} pool that hashes a header
   * or a cookie ({@code hash_key}); a request without it hashes its path.
   */
  public long hashKey(String path, @Nullable String clientIp, @Nullable HttpHeaders headers) {
    if (ringHash) {
      String key = headers == null ? null : hashSource(headers);
      return RingHashBalancer.hashKey((key == null ? path : key).getBytes(StandardCharsets.UTF_8));
    }
    if (ipHash && clientIp != null) {
      return IpHashBalancer.hashAddress(clientIp.getBytes(StandardCharsets.UTF_8));
    }
    return 0L;
  }

  private @Nullable String hashSource(HttpHeaders headers) {
    OriginConfig.HashKey k = settings.selection().hashKey();
    String name = k.name();
    if (name == null) {
      return null;
    }
    if (k.source() == OriginConfig.HashKey.Source.HEADER) {
      return headers.get(name);
    }
    for (String line : headers.getAll(HttpHeaderNames.COOKIE)) {
      for (Cookie c : ServerCookieDecoder.LAX.decode(line)) {
        if (c.name().equals(name)) {
          return c.value();
        }
      }
    }
    return null;
  }

  /** A host for an attempt without affinity (round robin and least request ignore the key). */
  public HostPool pick() {
    return pick(0L, null);
  }

  /** A host for an attempt with affinity key {@code hashKey} (see {@link #hashKey}). */
  public HostPool pick(long hashKey) {
    return pick(hashKey, null);
  }

  /**
   * A host for an attempt, preferring one other than {@code exclude} (a retry or a hedge after an
   * attempt on {@code exclude}). Ejected and unhealthy hosts are skipped; {@code exclude} is
   * returned only when no other host is available. Never null: when every host is out, hosts are
   * taken in turn regardless of health ("panic", as Envoy does below its panic threshold) and the
   * breaker is what protects the origin.
   */
  public HostPool pick(long hashKey, @Nullable HostPool exclude) {
    long now = ticker.read();
    Host chosen = balancer.pick(now, hashKey);
    if (chosen == null) {
      return panic(exclude);
    }
    HostPool h = byHost.get(chosen);
    if (h == null) {
      return panic(exclude); // cannot happen: the balancer holds only this pool's hosts
    }
    if (exclude == null || h != exclude || hosts.size() == 1) {
      return h;
    }
    // Another draw first (a new random pair, or a remixed key that walks the ring elsewhere) ...
    for (int attempt = 1; attempt <= 2; attempt++) {
      Host again = balancer.pick(now, mix(hashKey + attempt));
      HostPool other = again == null ? null : byHost.get(again);
      if (other != null && other != exclude) {
        return other;
      }
    }
    // ... then the next available host after it, so a retry never lands on the same host by luck.
    int n = hosts.size();
    for (int k = 1; k < n; k++) {
      int i = (exclude.index() + k) % n;
      if (!health.isEjected(i)) {
        return hosts.get(i);
      }
    }
    return exclude;
  }

  private HostPool panic(@Nullable HostPool exclude) {
    panicPicks.incrementAndGet();
    int n = hosts.size();
    HostPool h = hosts.get((int) Math.floorMod(panicCursor.getAndIncrement(), (long) n));
    return h == exclude && n > 1 ? hosts.get((h.index() + 1) % n) : h;
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /**
   * The shard of a request for breakers scoped per shard: for {@code ring_hash}, the index of the
   * host that owns the key on the ring when every host is healthy (so a shard's breaker stays the
   * same while its owner is ejected and the keys walk elsewhere); 0 for other balancers.
   */
  public int shardOf(long hashKey) {
    RingHashBalancer ring = shards;
    if (ring == null) {
      return 0;
    }
    Host owner = ring.pick(0L, hashKey);
    HostPool h = owner == null ? null : byHost.get(owner);
    return h == null ? 0 : h.index();
  }

  /** Number of shards: the host count for {@code ring_hash}, else 1. */
  public int shardCount() {
    return shards == null ? 1 : hosts.size();
  }

  // ---- outcomes

  /**
   * Feeds one attempt's outcome on {@code host} to outlier detection. A response failure status
   * counts as a 5xx (503), a timeout as a 504, a malformed response, a reset or a TLS failure as a
   * 502, a connect failure as a connect failure; success and slow responses end a failure run;
   * ignored outcomes (client gone, hedge lost, local rejection) are not evidence and change
   * nothing.
   *
   * @param latencyNanos time from sending the request to the response head, or -1 when unknown
   */
  public void onAttemptOutcome(HostPool host, Outcome o, long latencyNanos, long now) {
    int i = host.index();
    if (i >= hosts.size() || hosts.get(i) != host) {
      return; // a host of the pool this one replaced on reload: its evidence is not ours
    }
    switch (o) {
      case SUCCESS, SLOW -> outlier.recordSuccess(i);
      case FAILURE_STATUS -> outlier.recordStatus(i, 503, now);
      case TIMEOUT -> outlier.recordStatus(i, 504, now);
      case MALFORMED_RESPONSE, TLS_FAILURE, RESET -> outlier.recordStatus(i, 502, now);
      case CONNECT_FAILURE -> outlier.recordConnectFailure(i, now);
      case CLIENT_CANCELLED, HEDGE_LOST, LOCAL_REJECTION -> {
        return;
      }
    }
    if (o != Outcome.CONNECT_FAILURE && o != Outcome.TIMEOUT) {
      host.recordLatency(latencyNanos);
    }
  }

  /**
   * {@code stale_on_slow: auto} for one route's requests to this origin: how long a request holding
   * a stale copy it may serve waits (twice the p95 of the route's recent successful responses from
   * this origin, at least 20 ms; 0 while overdue), and the requests waiting it out right now, each
   * as what releases it (thread-safe; it hops to the request's own event loop), so that the request
   * that finds the origin overdue releases the others. Per route: a fast route and a slow one on
   * the same pool have different healthy latencies, and one's answers in time must not hide the
   * other's brownout.
   */
  public StaleWait staleWait(String routeId) {
    StaleWait w = staleWaits.get(routeId);
    return w != null
        ? w
        : staleWaits.computeIfAbsent(
            routeId,
            id ->
                new StaleWait(
                    AdaptiveWait.withDefaults(ticker.read()), ConcurrentHashMap.newKeySet()));
  }

  /** One route's {@link #staleWait}: its latency estimate and its waiting requests. */
  public record StaleWait(AdaptiveWait latency, Set<Runnable> waiting) {}

  private void onOutlierEvent(OutlierEvent e) {
    String id = hosts.get(e.host()).id();
    switch (e.kind()) {
      case EJECTED -> {
        ejections.incrementAndGet(e.host());
        org.slf4j.LoggerFactory.getLogger("parapet.outlier")
            .warn(
                "origin {} host {} ejected for {} ms ({}), {} of {} hosts ejected",
                name(),
                id,
                e.durationNanos() / 1_000_000,
                e.reason(),
                e.ejectedHosts(),
                e.hostCount());
      }
      // Debug only: a pool of one or two hosts can never eject (max_ejected), and would otherwise
      // log this on every failing interval.
      case EJECTION_SKIPPED ->
          org.slf4j.LoggerFactory.getLogger("parapet.outlier")
              .debug(
                  "origin {} host {} not ejected ({}): max_ejected reached",
                  name(),
                  id,
                  e.reason());
      case RETURNED ->
          org.slf4j.LoggerFactory.getLogger("parapet.outlier")
              .info("origin {} host {} returned: slow start", name(), id);
    }
  }

  // ---- background work

  /**
   * Starts the pool's timers on {@code group}: outlier returns every 250 ms and, when configured,
   * health checks. Call once; {@link #stop()} ends them.
   */
  public synchronized void start(EventLoopGroup group) {
    if (advancing != null) {
      return;
    }
    advancing =
        group
            .next()
            .scheduleAtFixedRate(
                () -> outlier.advance(ticker.read()),
                ADVANCE_PERIOD_NANOS,
                ADVANCE_PERIOD_NANOS,
                TimeUnit.NANOSECONDS);
    HealthChecker hc = healthChecks;
    if (hc != null) {
      hc.start(group);
    }
  }

  /** Stops the timers (reload, shutdown). */
  public synchronized void stop() {
    ScheduledFuture<?> f = advancing;
    if (f != null) {
      f.cancel(false);
    }
    HealthChecker hc = healthChecks;
    if (hc != null) {
      hc.stop();
    }
  }

  // ---- the pool-wide bound

  /** Takes a request slot; false when {@code max_requests} are already in flight. */
  public boolean tryStartRequest() {
    for (; ; ) {
      int n = inFlight.get();
      if (n >= settings.maxRequests()) {
        return false;
      }
      if (inFlight.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /** Returns a slot taken by {@link #tryStartRequest}. */
  public void finishRequest() {
    inFlight.decrementAndGet();
  }

  /** Requests in flight to this pool. */
  public int inFlight() {
    return inFlight.get();
  }

  /** Closes idle connections (shutdown). */
  public void closeIdle() {
    hosts.forEach(HostPool::closeIdle);
  }

  // ---- state for the admin API and metrics

  /** Hosts that get no traffic now: ejected by outlier detection or failing health checks. */
  public int ejectedHosts() {
    int n = 0;
    for (int i = 0; i < hosts.size(); i++) {
      if (health.isEjected(i)) {
        n++;
      }
    }
    return n;
  }

  /** {@link #ejectedHosts} over all hosts, 0 to 1. */
  public double ejectedShare() {
    return hosts.isEmpty() ? 0 : (double) ejectedHosts() / hosts.size();
  }

  /** Where every host of the pool reports how long each new connection took to connect. */
  public void onConnectTimes(LongConsumer nanos) {
    hosts.forEach(h -> h.onConnectTimes(nanos));
  }

  /** Picks made with every host out (see {@link #pick(long, HostPool)}). */
  public long panicPicks() {
    return panicPicks.get();
  }

  /** Health checks sent so far (0 without health checks). */
  /**
   * Sends a {@link ProbeRequest} ({@code GET path}) to {@code host} from {@code loop}: a breaker's
   * synthetic half-open probe.
   */
  public void probe(
      HostPool host, String path, int timeoutMillis, EventLoop loop, ProbeRequest.Callback done) {
    ProbeRequest.send(
        loop,
        channelType,
        host.address(),
        host.tls(),
        path,
        timeoutMillis,
        "parapet-breaker-probe",
        done);
  }

  /** True when the pool has active health checks. */
  public boolean isHealthChecked() {
    return healthChecks != null;
  }

  /** True when active health checks are configured and currently hold {@code host} out. */
  public boolean failsHealthChecks(HostPool host) {
    HealthChecker hc = healthChecks;
    return hc != null && !hc.isHealthy(host.index());
  }

  public long healthChecksSent() {
    HealthChecker hc = healthChecks;
    return hc == null ? 0 : hc.checksSent();
  }

  /** What {@code /admin/origins} shows of one host. */
  public record HostStatus(
      String id,
      String address,
      boolean healthy,
      boolean ejected,
      long ejectedRemainingNanos,
      int ejections,
      int ejectionMultiplier,
      double weight,
      boolean slowStarting,
      int inflight,
      long latencyNanos,
      int openConnections,
      int pending) {}

  /** Every host's state at {@code now}. */
  public List<HostStatus> status(long now) {
    List<HostStatus> out = new ArrayList<>();
    HealthChecker hc = healthChecks;
    for (HostPool h : hosts) {
      int i = h.index();
      double factor = health.isEjected(i) ? 0.0 : slowStart.factor(health, i, now);
      out.add(
          new HostStatus(
              h.id(),
              h.address().getHostString() + ":" + h.address().getPort(),
              hc == null || hc.isHealthy(i),
              outlier.isEjected(i),
              outlier.remainingEjectionNanos(i, now),
              ejections.get(i),
              outlier.ejectionMultiplier(i),
              h.balancerHost().weight() * factor,
              factor > 0.0 && factor < 1.0,
              h.inflight(),
              h.latencyNanos(),
              h.openConnections(),
              h.pendingRequests()));
    }
    return out;
  }
}
