package dev.parapet.proxy.runtime;

import dev.parapet.core.breaker.Scope;
import dev.parapet.core.fleet.FleetLimiter;
import dev.parapet.core.latency.CachedQuantile;
import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.outcome.OutcomeClassifier;
import dev.parapet.core.outlier.OutlierConfig;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.admin.AdminAccess;
import dev.parapet.proxy.admin.AdminServer;
import dev.parapet.proxy.admin.Reloader;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.cache.Heuristic;
import dev.parapet.proxy.cache.StaleTrigger;
import dev.parapet.proxy.config.AdminConfig;
import dev.parapet.proxy.config.BreakerConfig;
import dev.parapet.proxy.config.CacheConfig;
import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.config.ConfigProblem;
import dev.parapet.proxy.config.FleetLimitConfig;
import dev.parapet.proxy.config.HealthCheckConfig;
import dev.parapet.proxy.config.HostPort;
import dev.parapet.proxy.config.InvalidConfigException;
import dev.parapet.proxy.config.OriginConfig;
import dev.parapet.proxy.config.OriginTlsConfig;
import dev.parapet.proxy.config.ProxyConfig;
import dev.parapet.proxy.config.RouteConfig;
import dev.parapet.proxy.config.TlsConfig;
import dev.parapet.proxy.config.TracingConfig;
import dev.parapet.proxy.fleet.FleetLimits;
import dev.parapet.proxy.flow.ProxySettings;
import dev.parapet.proxy.flow.Tracing;
import dev.parapet.proxy.net.Transport;
import dev.parapet.proxy.overload.OverloadMonitor;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.tls.OriginTls;
import dev.parapet.proxy.tls.ServerTls;
import dev.parapet.proxy.tls.TlsProviders;
import dev.parapet.proxy.upstream.HostSelection;
import dev.parapet.proxy.upstream.OriginSettings;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ForkJoinPool;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running Parapet: the data-plane listener and the admin listener built from one validated {@link
 * ProxyConfig}. This is where configuration becomes runtime objects; the data plane itself knows
 * nothing of YAML.
 *
 * <p>Wired here: everything the configuration names.
 */
public final class ProxyRuntime implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger("parapet.tls");

  private final ProxyServer proxy;
  private final AdminServer admin;
  private final FleetLimits fleet;

  private ProxyRuntime(ProxyServer proxy, AdminServer admin, FleetLimits fleet) {
    this.proxy = proxy;
    this.admin = admin;
    this.fleet = fleet;
  }

  /**
   * Starts both listeners.
   *
   * @throws IOException when the admin token file cannot be read
   * @throws IllegalArgumentException for a configuration the runtime cannot honour yet
   */
  public static ProxyRuntime start(
      ProxyConfig config, Ticker ticker, RandomSource random, int threads)
      throws IOException, InterruptedException {
    return start(config, null, ticker, random, threads);
  }

  /**
   * Starts both listeners; with a {@code file}, {@code POST /admin/reload} re-reads it, validates
   * it and swaps it in (name, listen and admin need a restart).
   */
  public static ProxyRuntime start(
      ProxyConfig config, @Nullable Path file, Ticker ticker, RandomSource random, int threads)
      throws IOException, InterruptedException {
    return start(config, file, ticker, random, threads, Transport.preferred());
  }

  /**
   * Starts both listeners, the proxy's event loops on {@code transport} (the admin API's stays on
   * NIO).
   */
  public static ProxyRuntime start(
      ProxyConfig config,
      @Nullable Path file,
      Ticker ticker,
      RandomSource random,
      int threads,
      Transport transport)
      throws IOException, InterruptedException {
    String token = readToken(config.admin().tokenFile());
    FleetLimits fleet = FleetLimits.start(ticker);
    List<OriginSettings> origins = origins(config, ticker.read(), fleet);
    ProxyServer proxy =
        ProxyServer.builder(settings(config))
            .routes(routes(config, origins))
            .origins(origins)
            .cache(cache(config, null))
            .clock(ticker, random)
            .threads(threads)
            .overload(OverloadMonitor.ofJvm(OverloadMonitor.thresholds(config.overload()), ticker))
            .transport(transport)
            .accessLog(config.accessLog())
            .tracing(tracing(config))
            .tls(config.tls())
            .http2(config.http2())
            .build();
    fleet.bind(proxy.metrics());
    try {
      proxy.start();
    } catch (RuntimeException | InterruptedException e) {
      fleet.close();
      throw e;
    }
    ServerTls tls = proxy.tls();
    if (tls != null) {
      LOG.info(
          "TLS on {} with {}: certificates for {}",
          tls.listen(),
          TlsProviders.describe(tls.provider()),
          tls.names());
    }
    AdminServer admin;
    try {
      AdminAccess access =
          new AdminAccess(
              token,
              config.admin().hosts(),
              config.admin().readToken() == AdminConfig.ReadToken.REQUIRED);
      admin = new AdminServer(address(config.admin().listen()), access, proxy, ticker).start();
    } catch (RuntimeException | InterruptedException e) {
      proxy.close();
      fleet.close();
      throw e;
    }
    if (file != null) {
      admin.reloader(new FileReloader(file, config, proxy, ticker, fleet));
    }
    admin.ready(true);
    return new ProxyRuntime(proxy, admin, fleet);
  }

  public ProxyServer proxy() {
    return proxy;
  }

  public AdminServer admin() {
    return admin;
  }

  /** The origins' fleet ceilings. */
  public FleetLimits fleet() {
    return fleet;
  }

  @Override
  public void close() {
    admin.ready(false);
    admin.close();
    proxy.close();
    fleet.close();
  }

  /** Re-reads the file the proxy started from. */
  private static final class FileReloader implements Reloader {
    private final Path file;
    private final ProxyConfig started;
    private final ProxyServer proxy;
    private final Ticker ticker;
    private final FleetLimits fleet;

    FileReloader(
        Path file, ProxyConfig started, ProxyServer proxy, Ticker ticker, FleetLimits fleet) {
      this.file = file;
      this.started = started;
      this.proxy = proxy;
      this.ticker = ticker;
      this.fleet = fleet;
    }

    @Override
    public synchronized Result reload() {
      ProxyConfig next;
      try {
        next = ConfigLoader.load(file).config();
      } catch (InvalidConfigException e) {
        List<String> errors = new ArrayList<>();
        for (ConfigProblem p : e.errors()) {
          errors.add(p.format(file.toString()));
        }
        return new Result(
            400, file + ": invalid (" + errors.size() + " errors): nothing changed", errors);
      } catch (IOException e) {
        return new Result(
            500, file + ": cannot read: " + e.getMessage() + ": nothing changed", List.of());
      }
      if (!next.admin().equals(started.admin())) {
        return new Result(409, "admin changed: needs a restart; nothing changed", List.of());
      }
      if (!next.tracing().equals(started.tracing())) {
        return new Result(409, "tracing changed: needs a restart; nothing changed", List.of());
      }
      ServerTls tls = proxy.tls();
      TlsConfig nextTls = next.tls();
      if ((tls == null) != (nextTls == null)) {
        return new Result(
            409,
            "tls " + (tls == null ? "added" : "removed") + ": needs a restart; nothing changed",
            List.of());
      }
      try {
        // Certificates first: built completely from the files, installed only once everything
        // else is accepted too. Handshakes after the swap get them; open connections keep theirs.
        ServerTls.Contexts certificates =
            tls == null || nextTls == null ? null : tls.prepare(nextTls);
        List<OriginSettings> origins = origins(next, ticker.read(), fleet);
        ProxyServer.Reconfigured r =
            proxy.reconfigure(
                settings(next), routes(next, origins), origins, cache(next, proxy.cache()));
        if (tls != null && certificates != null) {
          tls.swap(certificates);
        }
        return new Result(
            200,
            "reloaded "
                + file
                + ": "
                + r.routes()
                + " routes, "
                + r.origins()
                + " origins, "
                + r.breakersKept()
                + " breakers kept, "
                + r.breakersNew()
                + " new"
                + (tls == null ? "" : ", certificates reloaded"),
            List.of());
      } catch (IllegalArgumentException e) {
        return new Result(409, e.getMessage() + "; nothing changed", List.of());
      }
    }
  }

  static @Nullable String readToken(@Nullable Path file) throws IOException {
    if (file == null) {
      return null;
    }
    String token = Files.readString(file).trim();
    if (token.isEmpty()) {
      throw new IOException(
          "admin.token_file : " + file + " is empty (expected: the bearer token)");
    }
    return token;
  }

  /** OTLP export when {@code tracing.otlp_endpoint} is set, else {@link Tracing#OFF}. */
  static Tracing tracing(ProxyConfig c) {
    TracingConfig t = c.tracing();
    java.net.URI endpoint = t.endpoint();
    if (endpoint == null) {
      return Tracing.OFF;
    }
    String service = t.serviceName();
    return Tracing.otlp(endpoint.toString(), t.sample(), service != null ? service : c.name());
  }

  static InetSocketAddress address(HostPort hp) {
    return new InetSocketAddress(hp.host(), hp.port());
  }

  static ProxySettings settings(ProxyConfig c) {
    ProxySettings d = ProxySettings.defaults(c.name(), address(c.listen()));
    return new ProxySettings(
        c.name(),
        address(c.listen()),
        c.deadline().reserve(),
        c.deadline().minUseful(),
        d.headerTimeout(),
        d.idleTimeout(),
        d.maxBodyBytes(),
        d.maxHeaderBytes(),
        d.maxHeaderFields(),
        d.maxRequestLine(),
        c.admission().retryAfter().min().toSeconds(),
        c.admission().retryAfter().max().toSeconds(),
        c.admission(),
        c.trustedProxies());
  }

  /** Route ids from configuration: the match, made unique by the route's index. */
  static List<String> routeIds(ProxyConfig c) {
    List<String> list = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (RouteConfig r : c.routes()) {
      String id = r.match().toString();
      if (!ids.add(id)) {
        id = id + "#" + r.index();
        ids.add(id);
      }
      list.add(id);
    }
    return list;
  }

  /**
   * The edge cache: every route without {@code cache: off}, with its {@code default_ttl}. Across a
   * reload with unchanged {@code name} and {@code cache:} the stored responses are kept.
   */
  static EdgeCache cache(ProxyConfig c, @Nullable EdgeCache previous) {
    List<String> ids = routeIds(c);
    Map<String, EdgeCache.RouteRules> routes = new LinkedHashMap<>();
    for (int i = 0; i < ids.size(); i++) {
      RouteConfig.Cache rc = c.routes().get(i).cache();
      if (rc.enabled()) {
        routes.put(ids.get(i), new EdgeCache.RouteRules(rc.defaultTtl(), rc.staleOnSlow()));
      }
    }
    CacheConfig cc = c.cache();
    Set<StaleTrigger> on = EnumSet.noneOf(StaleTrigger.class);
    for (String name : cc.staleIfErrorOn()) {
      StaleTrigger t = StaleTrigger.ofConfigName(name);
      if (t != null) {
        on.add(t);
      }
    }
    EdgeCache.Settings settings =
        new EdgeCache.Settings(
            cc.maxSize().bytes(),
            cc.staleIfError(),
            cc.staleWhileRevalidate(),
            on,
            new Heuristic(0, cc.heuristicFraction(), cc.heuristicMax().toNanos()));
    if (previous != null) {
      return previous.reconfiguredWith(c.name(), settings, routes, ForkJoinPool.commonPool());
    }
    return new EdgeCache(
        c.name(), settings, ForkJoinPool.commonPool(), System::currentTimeMillis, routes);
  }

  /**
   * The routes. A route whose breaker differs from its origin's in scope, failure statuses or slow
   * threshold carries its own scope and classifier (judging by the origin's rolling latency for a
   * relative threshold); a route-scoped breaker carries its own probe path.
   */
  static List<Route> routes(ProxyConfig c, List<OriginSettings> origins) {
    Map<String, OriginSettings> byName = new LinkedHashMap<>();
    for (OriginSettings o : origins) {
      byName.put(o.name(), o);
    }
    List<Route> routes = new ArrayList<>();
    List<String> ids = routeIds(c);
    for (RouteConfig r : c.routes()) {
      String id = ids.get(routes.size());
      OriginConfig oc = c.origins().get(r.origin());
      OriginSettings os = byName.get(r.origin());
      BreakerConfig own = r.breaker();
      BreakerConfig inherited = oc == null ? BreakerConfig.DEFAULTS : oc.breaker();
      boolean ownClassifier =
          os != null
              && (!own.failureStatuses().equals(inherited.failureStatuses())
                  || !own.slow().threshold().equals(inherited.slow().threshold()));
      routes.add(
          new Route(
              id,
              r.match().host(),
              r.match().prefix(),
              r.origin(),
              r.timeout(),
              own.toBreakerPolicy(),
              r.priority(),
              r.retryNonIdempotent(),
              own.scope() == inherited.scope() ? null : own.scope(),
              ownClassifier && os != null ? classifier(own, os.latency()) : null,
              own.scope() == Scope.ROUTE ? own.probePath() : null,
              r.share()));
    }
    return routes;
  }

  /** The origin pools, each with its fleet ceiling from {@code fleet} when it has one. */
  static List<OriginSettings> origins(ProxyConfig c, long nowNanos, FleetLimits fleet) {
    Map<String, FleetLimitConfig> ceilings = new LinkedHashMap<>();
    for (OriginConfig o : c.origins().values()) {
      if (o.fleetLimit() != null) {
        ceilings.put(o.name(), o.fleetLimit());
      }
    }
    Map<String, FleetLimiter> limiters = fleet.reconcile(ceilings);
    List<OriginSettings> origins = new ArrayList<>();
    for (OriginSettings o : origins(c, nowNanos)) {
      origins.add(o.withFleetLimit(limiters.get(o.name())));
    }
    return origins;
  }

  static List<OriginSettings> origins(ProxyConfig c, long nowNanos) {
    List<OriginSettings> origins = new ArrayList<>();
    for (OriginConfig o : c.origins().values()) {
      RollingLatencyHistogram latency = RollingLatencyHistogram.withDefaults(nowNanos);
      List<InetSocketAddress> hosts = new ArrayList<>();
      for (HostPort hp : o.hosts()) {
        hosts.add(address(hp));
      }
      origins.add(
          OriginSettings.builder(o.name(), hosts)
              .connectTimeout(o.connectTimeout())
              .timeout(o.timeout())
              .limits(
                  o.limits().maxConnections(), o.limits().maxPending(), o.limits().maxRequests())
              .breaker(o.breaker().toBreakerPolicy(), o.breaker().scope())
              .classifier(classifier(o.breaker(), latency))
              .latency(latency)
              .retry(o.retry())
              .hedge(o.hedge())
              .fallback(o.fallback())
              .selection(selection(o))
              .probePath(o.breaker().probePath())
              .tls(originTls(c, o))
              .build());
    }
    return origins;
  }

  /**
   * HTTPS to origin {@code o}, or null for plain HTTP; on the provider {@code tls.provider} names
   * (OpenSSL where it loads when there is no {@code tls:} block).
   */
  static @Nullable OriginTls originTls(ProxyConfig c, OriginConfig o) {
    OriginTlsConfig t = o.tls();
    if (t == null) {
      return null;
    }
    TlsConfig listener = c.tls();
    SslProvider provider =
        TlsProviders.choose(listener == null ? TlsConfig.Provider.AUTO : listener.provider());
    return OriginTls.of(t, provider, "origins." + o.name() + ".tls");
  }

  /** Balancer, outlier ejection, health checks and slow start of one origin. */
  static HostSelection selection(OriginConfig o) {
    dev.parapet.proxy.config.OutlierConfig c = o.outlier();
    OutlierConfig outlier =
        OutlierConfig.defaults()
            .withConsecutive5xx(c.consecutive5xx())
            .withFailurePercentage(c.failurePercentage(), c.minRequests())
            .withInterval(c.interval())
            .withEjection(c.baseEjection(), c.maxEjection())
            .withMaxEjectedFraction(c.maxEjected());
    HealthCheckConfig hc = o.healthCheck();
    HostSelection.HealthCheck check =
        hc.enabled()
            ? new HostSelection.HealthCheck(
                hc.path(), hc.interval(), hc.timeout(), hc.healthy(), hc.unhealthy())
            : null;
    return new HostSelection(
        o.balancer().name().toLowerCase(Locale.ROOT),
        outlier,
        check,
        o.slowStart(),
        o.weights(),
        o.hashKey());
  }

  /**
   * The breaker's failure statuses and slow threshold, absolute or relative to the origin's own
   * rolling quantile (at least 20 samples, refreshed every 100 ms).
   */
  static OutcomeClassifier classifier(BreakerConfig b, RollingLatencyHistogram latency) {
    CachedQuantile quantile =
        b.slow().threshold() instanceof BreakerConfig.SlowThreshold.Relative r
            ? new CachedQuantile(latency, r.quantile(), 20, Duration.ofMillis(100))
            : null;
    return OutcomeClassifier.standard()
        .withFailureStatuses(b.failureStatuses())
        .withSlowCalls(
            b.slow()
                .threshold()
                .toSlowCallThreshold(quantile == null ? now -> -1L : quantile::nanos));
  }
}
