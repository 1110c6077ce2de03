package dev.parapet.proxy.server;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.BreakerRegistry;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.State;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.config.Http2Config;
import dev.parapet.proxy.config.TlsConfig;
import dev.parapet.proxy.flow.AccessLog;
import dev.parapet.proxy.flow.IncidentMode;
import dev.parapet.proxy.flow.ProxyContext;
import dev.parapet.proxy.flow.ProxySettings;
import dev.parapet.proxy.flow.RequestIds;
import dev.parapet.proxy.flow.Tracing;
import dev.parapet.proxy.http.ProxyError;
import dev.parapet.proxy.http1.ClientCodec;
import dev.parapet.proxy.metrics.ProxyMetrics;
import dev.parapet.proxy.net.Transport;
import dev.parapet.proxy.overload.OverloadMonitor;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.tls.AlpnDispatch;
import dev.parapet.proxy.tls.ServerTls;
import dev.parapet.proxy.tls.TlsInitializer;
import dev.parapet.proxy.upstream.OriginPool;
import dev.parapet.proxy.upstream.OriginSettings;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One Parapet listener: a Netty HTTP/1.1 server whose client connections each hand their requests
 * to a {@link dev.parapet.proxy.flow.RequestFlow} ({@link ClientConnection}), with origin pools,
 * breakers, admission control and the edge cache shared by all of them through one {@link
 * ProxyContext} per configuration. Built by {@link #builder}.
 *
 * <p>Breakers are keyed by what configuration names (origins, routes, hosts), so their number is
 * bounded by construction; the registry is sized to exactly those keys.
 */
public final class ProxyServer implements AutoCloseable {
  /** The listener's settings at start: listen address and request limits need a restart. */
  private final ProxySettings settings;

  private final ProxyMetrics metrics;
  private final Ticker ticker;
  private final RandomSource random;
  private final BreakerListener listeners;
  private final EventLoopGroup group;
  private final Transport transport;
  private final OverloadMonitor overload;
  private final IncidentMode incident = new IncidentMode();
  private final @Nullable AccessLog accessLog;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile ProxyContext context;
  private final RequestIds requestIds;
  private final Tracing tracing;

  /** Turns one configuration into a request context (at start, reload and incident). */
  private final ContextAssembly assembly;

  /** The routes in force, kept so an incident can rebuild the breakers over the same pools. */
  private List<Route> routes;

  private @Nullable Channel serverChannel;

  /** The HTTPS listener's certificates, or null when there is no {@code tls:} block. */
  private final @Nullable ServerTls tls;

  private @Nullable Channel tlsChannel;

  /** Limits of HTTP/2 client connections (a change needs a restart). */
  private final Http2Config http2Config;

  /** The HTTP/2 connections of this listener (made at start). */
  private @Nullable Http2Connections http2;

  /** A stop began: responses close their connections, HTTP/2 connections got GOAWAY. */
  private volatile boolean draining;

  /** The open HTTP/1.1 client connections (a closed channel leaves by itself). */
  private final ChannelGroup http1Clients = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);

  private io.netty.util.concurrent.@Nullable ScheduledFuture<?> overloadGoAway;
  private io.netty.util.concurrent.@Nullable ScheduledFuture<?> reconciling;
  private io.netty.util.concurrent.@Nullable ScheduledFuture<?> probing;
  private @Nullable BreakerProber prober;

  private ProxyServer(Builder b) {
    this.settings = b.settings;
    this.overload = b.overload;
    this.http2Config = b.http2;
    this.routes = List.copyOf(b.routes);
    this.ticker = b.ticker;
    this.random = b.random;
    this.transport = b.transport;
    this.group = new MultiThreadIoEventLoopGroup(b.threads, transport.ioHandlers());
    List<String> reasons = new ArrayList<>();
    for (ProxyError e : ProxyError.values()) {
      reasons.add(e.name());
    }
    this.metrics = new ProxyMetrics(List.of(), List.of(), reasons, ticker);
    this.requestIds = new RequestIds(random);
    this.tracing = b.tracing;
    this.listeners =
        new BreakerListeners(new BreakerEventLog(settings.name(), ticker, requestIds), metrics);
    // Shed counters exist from the start (at zero): a dashboard shows "0 shed", not "no data".
    for (int priority = 1; priority <= 4; priority++) {
      for (RejectReason reason : RejectReason.values()) {
        metrics.declare(
            "parapet.shed",
            "priority",
            Integer.toString(priority),
            "reason",
            reason.name().toLowerCase(Locale.ROOT));
      }
    }
    try {
      Path logFile = b.accessLog;
      this.accessLog = logFile == null ? null : new AccessLog(logFile);
      AccessLog log = accessLog;
      if (log != null) {
        metrics.gauge("parapet.access.log.dropped", "listener", settings.name(), log::dropped);
      }
      this.assembly =
          new ContextAssembly(
              metrics,
              ticker,
              random,
              listeners,
              overload,
              incident,
              accessLog,
              requestIds,
              tracing,
              this::context);
      this.context =
          assembly.build(settings, routes, pools(b.origins), b.cache, null, false).context();
      TlsConfig tlsConfig = b.tls;
      this.tls = tlsConfig == null ? null : new ServerTls(tlsConfig, true, metrics);
    } catch (RuntimeException e) {
      group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      throw e;
    }
  }

  /**
   * A listener with {@code settings}; routes, origins and everything else are set on the builder.
   */
  public static Builder builder(ProxySettings settings) {
    return new Builder(settings);
  }

  /**
   * Assembles a {@link ProxyServer}; {@link #build()} makes it, {@link ProxyServer#start} binds.
   */
  public static final class Builder {
    private final ProxySettings settings;
    private List<Route> routes = List.of();
    private List<OriginSettings> origins = List.of();
    private EdgeCache cache;
    private Ticker ticker = Ticker.system();
    private RandomSource random = RandomSource.seeded(System.nanoTime());
    private int threads;
    private OverloadMonitor overload = OverloadMonitor.disabled();
    private Transport transport = Transport.preferred();
    private @Nullable Path accessLog;
    private Tracing tracing = Tracing.OFF;
    private @Nullable TlsConfig tls;
    private Http2Config http2 = Http2Config.DEFAULTS;

    private Builder(ProxySettings settings) {
      this.settings = Objects.requireNonNull(settings, "settings");
      this.cache = EdgeCache.disabled(settings.name());
    }

    public Builder routes(List<Route> routes) {
      this.routes = List.copyOf(routes);
      return this;
    }

    public Builder origins(List<OriginSettings> origins) {
      this.origins = List.copyOf(origins);
      return this;
    }

    /** The edge cache (its routes name the route ids that cache); none by default. */
    public Builder cache(EdgeCache cache) {
      this.cache = Objects.requireNonNull(cache, "cache");
      return this;
    }

    /** The clock and the jitter source (seeded in tests, for the same draws every run). */
    public Builder clock(Ticker ticker, RandomSource random) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /** Event loop threads; 0 (the default) is Netty's default, twice the CPUs. */
    public Builder threads(int threads) {
      if (threads < 0) {
        throw new IllegalArgumentException("threads : " + threads + " (expected: >= 0)");
      }
      this.threads = threads;
      return this;
    }

    /** The overload monitor, started and stopped with the server; none by default. */
    public Builder overload(OverloadMonitor overload) {
      this.overload = Objects.requireNonNull(overload, "overload");
      return this;
    }

    /** The sockets' transport (io_uring, epoll or NIO), for the listener and the origin pools. */
    public Builder transport(Transport transport) {
      this.transport = Objects.requireNonNull(transport, "transport");
      return this;
    }

    /** Spans of requests and attempts (a change needs a restart); off when unset. */
    public Builder tracing(Tracing tracing) {
      this.tracing = Objects.requireNonNull(tracing, "tracing");
      return this;
    }

    /** An HTTPS listener beside the plain one ({@code tls:}); none when null (the default). */
    public Builder tls(@Nullable TlsConfig tls) {
      this.tls = tls;
      return this;
    }

    /** Limits of HTTP/2 client connections (a change needs a restart); the defaults if unset. */
    public Builder http2(Http2Config http2) {
      this.http2 = Objects.requireNonNull(http2, "http2");
      return this;
    }

    /** One JSON line per request to {@code file} (a new path needs a restart). */
    public Builder accessLog(@Nullable Path file) {
      this.accessLog = file;
      return this;
    }

    /**
     * The server, not yet listening.
     *
     * @throws IllegalArgumentException when a route names an unknown origin
     */
    public ProxyServer build() {
      return new ProxyServer(this);
    }
  }

  /** What a reconfiguration did. */
  public record Reconfigured(int routes, int origins, int breakersKept, int breakersNew) {}

  /**
   * Swaps in new routes, origins and settings atomically: requests that start afterwards see the
   * new configuration, requests in flight finish with the old one. A breaker whose key and policy
   * are unchanged is carried over with its state; others start CLOSED. Origin pools are new (their
   * connections are re-established); the old pools' idle connections are closed.
   *
   * @throws IllegalArgumentException when {@code newSettings} changes the name or the listen
   *     address (those need a restart) or a route names an unknown origin
   */
  public Reconfigured reconfigure(
      ProxySettings newSettings, List<Route> routes, List<OriginSettings> origins) {
    return reconfigure(newSettings, routes, origins, context.cache());
  }

  /** {@link #reconfigure(ProxySettings, List, List)} with a new (or the same) edge cache. */
  public Reconfigured reconfigure(
      ProxySettings newSettings,
      List<Route> routes,
      List<OriginSettings> origins,
      EdgeCache cache) {
    ProxySettings current = context.settings();
    if (!newSettings.name().equals(current.name())
        || !newSettings.listen().equals(current.listen())) {
      throw new IllegalArgumentException(
          "name, listen : "
              + newSettings.name()
              + ", "
              + newSettings.listen()
              + " (expected: unchanged "
              + current.name()
              + ", "
              + current.listen()
              + "; changing them needs a restart)");
    }
    ContextAssembly.Built built;
    synchronized (this) {
      ProxyContext old = context;
      built = assembly.build(newSettings, routes, pools(origins), cache, old, false);
      context = built.context();
      this.routes = List.copyOf(routes);
      if (serverChannel != null) {
        built.context().origins().values().forEach(p -> p.start(group));
      }
      old.origins().values().forEach(OriginPool::stop);
      old.origins().values().forEach(OriginPool::closeIdle);
    }
    return new Reconfigured(routes.size(), origins.size(), built.kept(), built.fresh());
  }

  /**
   * Declares ({@code on}) or ends an incident (DESIGN.md's runbook API): every breaker policy gets
   * a failure rate of at most 20 % (or its configured one back), and {@link
   * IncidentMode#preferStale} turns on (off). Breakers are rebuilt over the same pools the way a
   * reload does: one whose policy does not change keeps its state; a CLOSED one with a new policy
   * starts afresh under it; one that is OPEN, HALF_OPEN, RAMPING, FORCED_OPEN or DISABLED is kept
   * as it is, because forgetting that an origin is sick in the middle of an incident would send it
   * a flood. Such a breaker takes the new policy once it is CLOSED again ({@link
   * #reconcileBreakers}, every second).
   */
  public synchronized IncidentMode.Change incident(boolean on) {
    if (incident.active() == on) {
      return new IncidentMode.Change(on, false, incident.since(), 0, 0);
    }
    incident.set(on ? Instant.now() : null);
    ProxyContext old = context;
    ContextAssembly.Built built =
        assembly.build(old.settings(), routes, old.origins(), old.cache(), old, true);
    context = built.context();
    return new IncidentMode.Change(on, true, incident.since(), built.fresh(), built.keptTripped());
  }

  /**
   * Gives every CLOSED breaker whose policy is not the one configuration (and the incident state)
   * asks for a fresh breaker under that policy: the breakers an incident change kept because they
   * were tripped. Cheap when nothing differs (one lookup per configured key). Returns how many were
   * replaced.
   */
  public synchronized int reconcileBreakers() {
    ProxyContext ctx = context;
    Map<BreakerKey, BreakerPolicy> wanted =
        ContextAssembly.breakerPolicies(routes, ctx.origins(), incident);
    int stale = 0;
    for (Map.Entry<BreakerKey, BreakerPolicy> e : wanted.entrySet()) {
      CircuitBreaker b = ctx.breakers().find(e.getKey());
      if (b != null && b.state() == State.CLOSED && !b.policy().equals(e.getValue())) {
        stale++;
      }
    }
    if (stale > 0) {
      context =
          assembly.build(ctx.settings(), routes, ctx.origins(), ctx.cache(), ctx, true).context();
    }
    return stale;
  }

  /** The incident state (read by the request path). */
  public IncidentMode incident() {
    return incident;
  }

  /** The overload monitor (read by the request path and readyz). */
  public OverloadMonitor overload() {
    return overload;
  }

  private Map<String, OriginPool> pools(List<OriginSettings> origins) {
    Map<String, OriginPool> pools = new LinkedHashMap<>();
    for (OriginSettings o : origins) {
      pools.put(o.name(), new OriginPool(o, transport.socketChannel(), ticker, random));
    }
    return pools;
  }

  /**
   * Adds the HTTP/1.1 handlers to the end of {@code p}, the slow-head timer first: on a TLS
   * connection once ALPN chose {@code http/1.1} ({@link AlpnDispatch}).
   */
  private void http1(ChannelPipeline p) {
    RequestHeadTimer timer = headTimer();
    p.addLast("head-timer", timer);
    http1(p, timer);
  }

  private RequestHeadTimer headTimer() {
    return new RequestHeadTimer(
        settings.headerTimeout().toNanos(),
        settings.idleTimeout().toNanos(),
        context.responses(),
        context.viaMember(),
        metrics,
        ticker);
  }

  /**
   * What ALPN's {@code h2} gets on the HTTPS listener: the HTTP/2 handlers ({@link
   * Http2Connections#install}), added to the end of the pipeline. Null before {@link #start} made
   * them; {@code h2} is then not advertised.
   */
  private @Nullable Consumer<ChannelPipeline> http2OverTls() {
    Http2Connections h2 = http2;
    return h2 == null ? null : h2::install;
  }

  /**
   * Binds the listener (and the HTTPS listener when {@code tls:} is configured): each cleartext
   * connection is HTTP/1.1 or, when it opens with the HTTP/2 client preface, HTTP/2 ({@link
   * CleartextProtocols}); a TLS connection is what ALPN chose.
   */
  public ProxyServer start() throws InterruptedException {
    Http2Connections h2 =
        new Http2Connections(
            this::context,
            http2Config,
            metrics,
            ticker,
            this::draining,
            settings.name(),
            settings.idleTimeout());
    http2 = h2;
    ServerBootstrap b =
        new ServerBootstrap()
            .group(group)
            .channel(transport.serverChannel())
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    RequestHeadTimer timer = headTimer();
                    ch.pipeline()
                        .addLast("head-timer", timer)
                        .addLast("protocol", new CleartextProtocols(h2, p -> http1(p, timer)));
                  }
                });
    serverChannel = b.bind(settings.listen()).sync().channel();
    ServerTls t = tls;
    if (t != null) {
      tlsChannel =
          b.clone()
              .childHandler(new TlsInitializer(t, this::http1, http2OverTls()))
              .bind(t.listen().host(), t.listen().port())
              .sync()
              .channel();
    }
    synchronized (this) {
      context.origins().values().forEach(p -> p.start(group));
    }
    overload.start(group);
    // GOAWAY is how HTTP/2 clients learn to go elsewhere: sent to every connection while the
    // overload manager stops accepting (HTTP/1.1 gets Connection: close on its next response).
    overloadGoAway =
        group
            .next()
            .scheduleWithFixedDelay(
                () -> {
                  if (overload.stopAccepting()) {
                    h2.goAwayAll("overload");
                  }
                },
                100,
                100,
                TimeUnit.MILLISECONDS);
    reconciling =
        group.next().scheduleWithFixedDelay(this::reconcileBreakers, 1, 1, TimeUnit.SECONDS);
    EventLoop probeLoop = group.next();
    prober = new BreakerProber(this::context, ticker, probeLoop);
    probing = probeLoop.scheduleWithFixedDelay(prober::sweep, 100, 100, TimeUnit.MILLISECONDS);
    return this;
  }

  /** Adds the HTTP/1.1 handlers at the end of {@code p}. */
  private void http1(ChannelPipeline p, RequestHeadTimer timer) {
    p.addLast(ClientCodec.handlers(settings.maxRequestLine(), settings.maxHeaderBytes(), 16 * 1024))
        .addLast("proxy", new ClientConnection(this::context, timer, this::draining));
    http1Clients.add(p.channel());
  }

  /**
   * The HTTP/2 side of this listener: where a TLS listener hands a connection that chose {@code h2}
   * by ALPN ({@link Http2Connections#install}). Null before {@link #start}.
   */
  @Nullable Http2Connections http2() {
    return http2;
  }

  /** Whether a stop began ({@link #drain}): readyz and the dashboard say "draining". */
  public boolean draining() {
    return draining;
  }

  /**
   * The first half of a graceful stop: closes the listening socket (no new connections) and waits,
   * up to {@code max}, until no request is in flight — routed and not yet answered, as {@code
   * parapet_route_inflight} counts them. Clients are told to go elsewhere: every HTTP/2 connection
   * gets GOAWAY with the last stream the proxy took (those streams finish), and every HTTP/1.1
   * response from now on carries {@code Connection: close} and closes its connection (a request a
   * keep-alive client sends meanwhile is still served). {@link #close} then closes whatever is
   * left. Called off the event loops (a signal handler or shutdown hook); it polls.
   *
   * @return the requests still in flight when it stopped waiting, 0 when drained
   */
  public long drain(Duration max) throws InterruptedException {
    draining = true;
    Http2Connections h2 = http2;
    if (h2 != null) {
      h2.goAwayAll("drain");
    }
    closeListeners();
    // Idle keep-alive connections close now (a client opens its next request elsewhere); busy
    // ones close after their response, which says Connection: close.
    for (Channel ch : http1Clients) {
      ClientConnection c = ch.pipeline().get(ClientConnection.class);
      if (c != null) {
        ch.eventLoop().execute(c::closeIfIdle);
      }
    }
    long deadline = ticker.read() + max.toNanos();
    long inFlight;
    while ((inFlight = metrics.routeInflight()) > 0 && ticker.read() - deadline < 0) {
      Thread.sleep(20);
    }
    return inFlight;
  }

  private void closeListeners() {
    Channel plain = serverChannel;
    if (plain != null) {
      plain.close().syncUninterruptibly();
    }
    Channel secure = tlsChannel;
    if (secure != null) {
      secure.close().syncUninterruptibly();
    }
  }

  /** The HTTPS listener's certificates (for a reload), or null when there is none. */
  public @Nullable ServerTls tls() {
    return tls;
  }

  /** The HTTPS listener's bound port (useful when configured with port 0). */
  public int tlsPort() {
    Channel c = tlsChannel;
    if (c == null) {
      throw new IllegalStateException("tls : not listening (expected: a tls block and start())");
    }
    return ((InetSocketAddress) c.localAddress()).getPort();
  }

  /** Synthetic breaker probes sent so far (0 before start). */
  public long breakerProbesSent() {
    BreakerProber p = prober;
    return p == null ? 0 : p.probesSent();
  }

  /** The bound port (useful when configured with port 0). */
  public int port() {
    Channel c = serverChannel;
    if (c == null) {
      throw new IllegalStateException("server : not started (expected: start() first)");
    }
    return ((InetSocketAddress) c.localAddress()).getPort();
  }

  /** The configuration in force (read once per request). */
  ProxyContext context() {
    return context;
  }

  /** The breakers (for the admin API and tests). */
  public BreakerRegistry breakers() {
    return context.breakers();
  }

  /** The sockets' transport: epoll, io_uring or nio. */
  public Transport transport() {
    return transport;
  }

  /** The metrics (for the admin API's /metrics). */
  public ProxyMetrics metrics() {
    return metrics;
  }

  /** The listener's admission control (for the overload manager, the admin API and tests). */
  public AdmissionController admission() {
    return context.admission();
  }

  /** The edge cache in force. */
  public EdgeCache cache() {
    return context.cache();
  }

  /** The origin pools by name. */
  public Map<String, OriginPool> origins() {
    return context.origins();
  }

  /**
   * Stops listening, closes idle origin connections and the event loops. A second call does
   * nothing.
   */
  @Override
  public void close() {
    if (closed.getAndSet(true)) {
      return;
    }
    closeListeners();
    overload.close();
    io.netty.util.concurrent.ScheduledFuture<?> r = reconciling;
    if (r != null) {
      r.cancel(false);
    }
    io.netty.util.concurrent.ScheduledFuture<?> og = overloadGoAway;
    if (og != null) {
      og.cancel(false);
    }
    io.netty.util.concurrent.ScheduledFuture<?> pr = probing;
    if (pr != null) {
      pr.cancel(false);
    }
    context.origins().values().forEach(OriginPool::stop);
    context.origins().values().forEach(OriginPool::closeIdle);
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    AccessLog log = accessLog;
    if (log != null) {
      log.close();
    }
    tracing.close(); // flushes the spans still batched
  }
}
