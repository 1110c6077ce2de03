package dev.parapet.proxy.faultorigin;

import dev.parapet.core.time.RandomSource;
import dev.parapet.proxy.net.Transport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.stream.ChunkedWriteHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * An HTTP/1.1 origin that fails on purpose, for tests, demos and outage rehearsals ({@code parapet
 * origin}).
 *
 * <p>What it does is one immutable {@link FaultPlan} in a volatile field: each request reads it
 * once (see {@link FaultHandler}), and {@link #swapPlan} replaces it whole. The listener follows
 * the plan's {@code refuse} flag: refusing closes the server channel (connects get ECONNREFUSED, as
 * from a dead process) and the open connections; recovering binds the same port again. Those
 * listener changes run one after another on a chain of futures, so quick toggles settle in the
 * order they were asked, and {@code swapPlan} completes only once the listener is in the state the
 * plan asks for: a test may connect the moment it returns.
 *
 * <p>The control endpoint ({@link ControlHandler}) has its own listener on 127.0.0.1, so it stays
 * reachable while the origin refuses. Both share one event-loop group: epoll where available, else
 * NIO.
 */
public final class FaultOrigin implements AutoCloseable {
  private static final int CONTROL_MAX_BODY = 1 << 20;

  private final FaultOriginSettings settings;
  private final WorkerPool workers;
  private final FaultPlan initialPlan;
  private final RandomSource random;
  private final OriginCounters counters = new OriginCounters();
  private final EventLoopGroup group;
  private final Transport transport;
  private final ServerBootstrap originBootstrap;
  private final ChannelGroup connections;
  private final int port;
  private final @Nullable Channel controlChannel;
  private final Object transitionLock = new Object();

  private volatile @Nullable Channel listener;
  private volatile boolean stopped;
  // Read once per request without locking; written under transitionLock.
  private volatile FaultPlan plan;
  private CompletableFuture<Void> transitions = CompletableFuture.completedFuture(null);

  private FaultOrigin(FaultOriginSettings settings, FaultPlan initialPlan) {
    this.settings = settings;
    this.initialPlan = initialPlan;
    this.plan = initialPlan;
    Long seed = settings.seed();
    this.random = seed == null ? RandomSource.threadLocal() : RandomSource.seeded(seed);
    this.workers = new WorkerPool(settings.workers());
    this.transport = Transport.preferred();
    this.group =
        new MultiThreadIoEventLoopGroup(
            settings.ioThreads(),
            new DefaultThreadFactory("parapet-origin", true),
            transport.ioHandlers());
    this.connections = new DefaultChannelGroup("fault-origin", GlobalEventExecutor.INSTANCE);
    Class<? extends ServerChannel> serverClass = transport.serverChannel();
    this.originBootstrap =
        new ServerBootstrap()
            .group(group)
            .channel(serverClass)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    connections.add(ch);
                    ch.pipeline()
                        .addLast(new HttpServerCodec())
                        .addLast(new ChunkedWriteHandler())
                        .addLast(new FaultHandler(FaultOrigin.this));
                  }
                });
    boolean started = false;
    try {
      Channel ch = bind(originBootstrap, settings.bind(), settings.port(), "origin");
      this.listener = ch;
      this.port = ((InetSocketAddress) ch.localAddress()).getPort();
      if (settings.controlPort() == FaultOriginSettings.NO_CONTROL) {
        this.controlChannel = null;
      } else {
        ServerBootstrap control =
            new ServerBootstrap()
                .group(group)
                .channel(serverClass)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childHandler(
                    new ChannelInitializer<SocketChannel>() {
                      @Override
                      protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                            .addLast(new HttpServerCodec())
                            .addLast(new HttpObjectAggregator(CONTROL_MAX_BODY))
                            .addLast(new ControlHandler(FaultOrigin.this));
                      }
                    });
        this.controlChannel =
            bind(control, InetAddress.getLoopbackAddress(), settings.controlPort(), "control");
      }
      started = true;
    } finally {
      if (!started) {
        closeChannelsAndGroup();
      }
    }
  }

  /**
   * Binds the origin (and its control endpoint, if the settings ask for one) and starts serving
   * {@code plan}. Throws {@link UncheckedIOException} when a port cannot be bound.
   */
  public static FaultOrigin start(FaultOriginSettings settings, FaultPlan plan) {
    FaultOrigin origin = new FaultOrigin(settings, plan);
    if (plan.refuse()) {
      origin.reconcileListener().join();
    }
    return origin;
  }

  /** The origin port (the one bound, also while refusing). */
  public int port() {
    return port;
  }

  /** The origin address: the bind address and {@link #port()}. */
  public InetSocketAddress address() {
    return new InetSocketAddress(settings.bind(), port);
  }

  /** The control endpoint port, if there is one. */
  public OptionalInt controlPort() {
    Channel ch = controlChannel;
    return ch == null
        ? OptionalInt.empty()
        : OptionalInt.of(((InetSocketAddress) ch.localAddress()).getPort());
  }

  /** {@code io_uring}, {@code epoll} or {@code nio}. */
  public String transport() {
    return transport.name();
  }

  /** The plan in force. */
  public FaultPlan plan() {
    return plan;
  }

  /** The plan the origin started with; {@link #resetPlan()} returns to it. */
  public FaultPlan initialPlan() {
    return initialPlan;
  }

  /**
   * Puts {@code next} in force for every request read from now on. The future completes (with
   * {@code next}) once the listener is open or closed as {@code next.refuse()} asks, or fails if
   * the port could not be bound again.
   */
  public CompletableFuture<FaultPlan> swapPlan(FaultPlan next) {
    return updatePlan(current -> next);
  }

  /**
   * Replaces the plan with {@code change(current)}. Changes are applied one at a time (plan changes
   * are rare; requests read the plan without locking), so {@code change} sees the plan that the
   * previous change produced. Completes like {@link #swapPlan}.
   */
  public CompletableFuture<FaultPlan> updatePlan(UnaryOperator<FaultPlan> change) {
    synchronized (transitionLock) {
      FaultPlan next = change.apply(plan);
      plan = next;
      return reconcileListener().thenApply(v -> next);
    }
  }

  /** Returns to {@link #initialPlan()}. */
  public CompletableFuture<FaultPlan> resetPlan() {
    return swapPlan(initialPlan);
  }

  /** Counters since start or the last {@link #resetStats()}. */
  public OriginStats stats() {
    return counters.snapshot();
  }

  /** Sets every counter back to zero, atomically. */
  public void resetStats() {
    counters.reset();
  }

  /**
   * Closes the listeners and every connection and stops the event loops; waits up to a few seconds.
   * Idempotent. Must not be called from one of this origin's event loops.
   */
  @Override
  public void close() {
    boolean onOwnLoop = false;
    for (EventExecutor loop : group) {
      onOwnLoop |= loop.inEventLoop();
    }
    if (onOwnLoop) {
      throw new IllegalStateException(
          "close : called on an event loop of this origin (expected: any other thread)");
    }
    stopped = true;
    try {
      reconcileListener().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      // Closing anyway: the event loops go below, which closes whatever is still open.
    }
    closeChannelsAndGroup();
  }

  RandomSource random() {
    return random;
  }

  OriginCounters counters() {
    return counters;
  }

  WorkerPool workers() {
    return workers;
  }

  /**
   * Opens or closes the origin listener to match the plan and the stopped flag, after every change
   * asked before it has settled.
   */
  private CompletableFuture<Void> reconcileListener() {
    synchronized (transitionLock) {
      transitions = transitions.handle((v, e) -> null).thenCompose(v -> reconcileNow());
      return transitions;
    }
  }

  private CompletableFuture<Void> reconcileNow() {
    boolean listen = !stopped && !plan.refuse();
    Channel current = listener;
    if (listen && current == null) {
      CompletableFuture<Void> done = new CompletableFuture<>();
      originBootstrap
          .bind(settings.bind(), port)
          .addListener((ChannelFuture f) -> {
            if (f.isSuccess()) {
              listener = f.channel();
              done.complete(null);
            } else {
              done.completeExceptionally(
                  new IOException(
                      "origin listener : could not bind "
                          + settings.bind().getHostAddress()
                          + ":"
                          + port
                          + " again (expected: the port to be free, found: "
                          + f.cause()
                          + ")",
                      f.cause()));
            }
          });
      return done;
    }
    if (!listen && current != null) {
      listener = null;
      CompletableFuture<Void> done = new CompletableFuture<>();
      current.close().addListener(f -> connections.close().addListener(g -> done.complete(null)));
      return done;
    }
    return CompletableFuture.completedFuture(null);
  }

  private static Channel bind(
      ServerBootstrap bootstrap, InetAddress address, int port, String what) {
    ChannelFuture f = bootstrap.bind(address, port).awaitUninterruptibly();
    if (!f.isSuccess()) {
      String message =
          what
              + " listener : could not bind "
              + address.getHostAddress()
              + ":"
              + port
              + " (expected: a free port, found: "
              + f.cause()
              + ")";
      throw new UncheckedIOException(message, new IOException(message, f.cause()));
    }
    return f.channel();
  }

  private void closeChannelsAndGroup() {
    Channel l = listener;
    if (l != null) {
      l.close().awaitUninterruptibly();
      listener = null;
    }
    Channel c = controlChannel;
    if (c != null) {
      c.close().awaitUninterruptibly();
    }
    connections.close().awaitUninterruptibly();
    Future<?> terminated = group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    terminated.awaitUninterruptibly();
  }
}
