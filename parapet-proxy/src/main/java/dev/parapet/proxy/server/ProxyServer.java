package dev.parapet.proxy.server;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.BreakerRegistry;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.metrics.ProxyMetrics;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.route.RouteTable;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginPool;
import dev.parapet.proxy.upstream.OriginSettings;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.util.HashedWheelTimer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One Parapet listener: a Netty HTTP/1.1 server whose client connections are each handled by a
 * {@link ClientConnection}, with origin pools, breakers and routes shared by all of them.
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
  private final HashedWheelTimer timeouts;
  private final EventLoopGroup group;
  private final Class<? extends ServerChannel> serverChannelType;
  private final Class<? extends SocketChannel> clientType;
  private volatile ProxyContext context;
  private @Nullable Channel serverChannel;

  /**
   * A listener without an edge cache.
   *
   * @param threads event loop threads (0: Netty's default, twice the CPUs)
   */
  public ProxyServer(
      ProxySettings settings,
      List<Route> routes,
      List<OriginSettings> origins,
      Ticker ticker,
      RandomSource random,
      int threads) {
    this(settings, routes, origins, EdgeCache.disabled(settings.name()), ticker, random, threads);
  }

  /**
   * @param cache the edge cache (its routes name the route ids that cache)
   * @param threads event loop threads (0: Netty's default, twice the CPUs)
   */
  public ProxyServer(
      ProxySettings settings,
      List<Route> routes,
      List<OriginSettings> origins,
      EdgeCache cache,
      Ticker ticker,
      RandomSource random,
      int threads) {
    this.settings = settings;
    this.ticker = ticker;
    this.random = random;
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    this.group = new MultiThreadIoEventLoopGroup(threads, io);
    this.serverChannelType = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    this.clientType = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    List<String> reasons = new ArrayList<>();
    for (ProxyError e : ProxyError.values()) {
      reasons.add(e.name());
    }
    this.metrics = new ProxyMetrics(List.of(), List.of(), reasons);
    this.listeners = new BreakerListeners(new BreakerEventLog(settings.name(), ticker), metrics);
    // Attempt timeouts: a wheel with 10 ms ticks; callbacks hop to the request's event loop.
    this.timeouts =
        new HashedWheelTimer(
            r -> {
              Thread t = new Thread(r, "parapet-timeouts");
              t.setDaemon(true);
              return t;
            },
            10,
            TimeUnit.MILLISECONDS,
            512);
    try {
      this.context = build(settings, routes, origins, cache, null).context();
    } catch (RuntimeException e) {
      timeouts.stop();
      group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      throw e;
    }
  }

  /** What a reconfiguration did. */
  public record Reconfigured(int routes, int origins, int breakersKept, int breakersNew) {}

  private record Built(ProxyContext context, int kept, int fresh) {}

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
    return reconfigure(newSettings, routes, origins, context.cache);
  }

  /** {@link #reconfigure(ProxySettings, List, List)} with a new (or the same) edge cache. */
  public Reconfigured reconfigure(
      ProxySettings newSettings,
      List<Route> routes,
      List<OriginSettings> origins,
      EdgeCache cache) {
    ProxySettings current = context.settings;
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
    ProxyContext old = context;
    Built built = build(newSettings, routes, origins, cache, old);
    context = built.context();
    old.origins.values().forEach(OriginPool::closeIdle);
    return new Reconfigured(routes.size(), origins.size(), built.kept(), built.fresh());
  }

  private Built build(
      ProxySettings settings,
      List<Route> routes,
      List<OriginSettings> origins,
      EdgeCache cache,
      @Nullable ProxyContext previous) {
    Map<String, OriginPool> pools = new LinkedHashMap<>();
    for (OriginSettings o : origins) {
      pools.put(o.name(), new OriginPool(o, clientType));
    }
    for (Route r : routes) {
      if (!pools.containsKey(r.origin())) {
        throw new IllegalArgumentException(
            "routes."
                + r.id()
                + ".origin : "
                + r.origin()
                + " (expected: one of "
                + pools.keySet()
                + ")");
      }
    }
    Map<BreakerKey, BreakerPolicy> policies = breakerPolicies(routes, pools);
    List<String> routeLabels = new ArrayList<>(routes.stream().map(Route::id).toList());
    routeLabels.add(ProxyMetrics.NO_ROUTE);
    metrics.ensureRoutes(routeLabels);
    metrics.ensureOrigins(List.copyOf(pools.keySet()));
    for (OriginPool pool : pools.values()) {
      metrics.gauge("parapet.origin.inflight", "origin", pool.name(), pool::inFlight);
      for (HostPool h : pool.hosts()) {
        metrics.gauge("parapet.origin.connections", "host", h.id(), h::openConnections);
        metrics.gauge("parapet.origin.pending", "host", h.id(), h::pendingRequests);
      }
    }
    metrics.gauge(
        "parapet.cache.size.bytes", "cache", cache.name(), cache.store()::weightedSizeBytes);
    metrics.gauge("parapet.cache.entries", "cache", cache.name(), cache.store()::estimatedUris);
    int[] kept = new int[1];
    BreakerRegistry registry =
        new BreakerRegistry(
            Math.max(1, policies.size()),
            Duration.ofDays(365),
            key -> {
              BreakerPolicy p = policies.get(key);
              BreakerPolicy policy = p == null ? BreakerPolicy.defaults() : p;
              CircuitBreaker before = previous == null ? null : previous.breakers.find(key);
              if (before != null && before.policy().equals(policy)) {
                kept[0]++;
                return before;
              }
              CircuitBreaker b = new CircuitBreaker(key, policy, random, listeners, ticker.read());
              metrics.breakerCreated(b);
              return b;
            });
    // Create every configured breaker now, so metrics and the admin API show them from the start.
    for (BreakerKey key : policies.keySet()) {
      registry.get(key, ticker.read());
    }
    ProxyContext ctx =
        new ProxyContext(
            settings,
            new RouteTable(routes),
            pools,
            registry,
            ticker,
            random,
            metrics,
            timeouts,
            cache);
    return new Built(ctx, kept[0], policies.size() - kept[0]);
  }

  /** Every breaker key configuration can produce, with its policy. */
  private static Map<BreakerKey, BreakerPolicy> breakerPolicies(
      List<Route> routes, Map<String, OriginPool> pools) {
    Map<BreakerKey, BreakerPolicy> policies = new HashMap<>();
    for (Route r : routes) {
      OriginPool pool = pools.get(r.origin());
      if (pool == null) {
        continue;
      }
      BreakerPolicy routePolicy = r.breaker();
      boolean perRoute = pool.settings().breakerScope() == Scope.ROUTE && routePolicy != null;
      for (HostPool h : pool.hosts()) {
        policies.put(
            ProxyContext.breakerKey(r, pool, h),
            perRoute ? routePolicy : pool.settings().breaker());
      }
    }
    return policies;
  }

  /** Binds the listener. */
  public ProxyServer start() throws InterruptedException {
    long headerNanos = settings.headerTimeout().toNanos();
    long idleNanos = settings.idleTimeout().toNanos();
    HttpDecoderConfig decoder =
        new HttpDecoderConfig()
            .setMaxInitialLineLength(settings.maxRequestLine())
            .setMaxHeaderSize(settings.maxHeaderBytes())
            .setMaxChunkSize(16 * 1024)
            .setValidateHeaders(true)
            .setAllowDuplicateContentLengths(false)
            .setStrictLineParsing(true)
            .setUseRfc9112TransferEncoding(true);
    ServerBootstrap b =
        new ServerBootstrap()
            .group(group)
            .channel(serverChannelType)
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    RequestHeadTimer timer =
                        new RequestHeadTimer(
                            headerNanos, idleNanos, context.responses, metrics, ticker);
                    ch.pipeline()
                        .addLast("head-timer", timer)
                        .addLast("codec", new HttpServerCodec(decoder))
                        .addLast("expect", new HttpServerExpectContinueHandler())
                        .addLast("proxy", new ClientConnection(ProxyServer.this::context, timer));
                  }
                });
    serverChannel = b.bind(settings.listen()).sync().channel();
    return this;
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
    return context.breakers;
  }

  /** The edge cache in force. */
  public EdgeCache cache() {
    return context.cache;
  }

  /** The metrics (for the admin API's /metrics). */
  public ProxyMetrics metrics() {
    return metrics;
  }

  /** The origin pools by name. */
  public Map<String, OriginPool> origins() {
    return context.origins;
  }

  @Override
  public void close() {
    Channel c = serverChannel;
    if (c != null) {
      c.close().syncUninterruptibly();
    }
    context.origins.values().forEach(OriginPool::closeIdle);
    timeouts.stop();
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
