package dev.parapet.proxy.upstream;

import dev.parapet.core.balance.Host;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.http1.OriginCodec;
import dev.parapet.proxy.tls.OriginTls;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslHandler;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.jspecify.annotations.Nullable;

/**
 * Keep-alive HTTP/1.1 connections to one origin host, bounded: at most {@code maxConnections} open
 * and at most {@code maxPending} requests waiting for one; beyond that the caller is told at once
 * (the proxy answers 503 {@code connection_limit_reached}) — never an unbounded queue.
 *
 * <p>Connections live on the event loop of the client connection that opened them, so a request and
 * its origin connection are handled by one thread without locks (Netty's per-loop pool idea). Idle
 * connections are kept per loop. A released connection goes to a waiter on its own loop; if waiters
 * wait only on other loops, it is closed instead, and the freed slot lets such a waiter connect on
 * its own loop.
 *
 * <p>It also counts the requests in flight to the host for {@code least_request}: one per {@link
 * #acquire}, ended by exactly one of {@link #release}, {@code onConnectFailure}, {@code
 * onLimitReached}, or dropping a cancelled waiter. The count lives in the core {@link Host} the
 * pool's balancer sees.
 */
public final class HostPool {

  /** Told, on the requesting loop, how the acquisition went. */
  public interface Acquirer {
    /** A connected, idle channel is now this acquirer's until {@link HostPool#release}. */
    void onConnection(Channel channel);

    /** Connecting failed (refused, timed out, reset). */
    void onConnectFailure(Throwable cause);

    /** The host's connection and pending limits are both reached. */
    void onLimitReached();

    /** True once the acquirer no longer wants a connection (its request ended meanwhile). */
    boolean isCancelled();
  }

  private final InetSocketAddress address;
  private final String id;
  private final int index;
  private final Host host;
  private final AtomicLong latencyNanos = new AtomicLong(-1L);
  private final int maxConnections;
  private final int maxPending;
  private final int connectTimeoutMillis;
  private final @Nullable OriginTls tls;
  private final Class<? extends Channel> channelType;
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger pending = new AtomicInteger();
  private final Map<EventLoop, LoopPool> loops = new ConcurrentHashMap<>();
  private final Ticker ticker;
  private volatile LongConsumer connectTimes = nanos -> {};

  /** Per event loop; {@code idle} is touched only on that loop, {@code waiters} from any. */
  private static final class LoopPool {
    final EventLoop loop;
    final ArrayDeque<Channel> idle = new ArrayDeque<>();
    final Queue<Acquirer> waiters = new ConcurrentLinkedQueue<>();

    LoopPool(EventLoop loop) {
      this.loop = loop;
    }
  }

  /**
   * A host of {@code weight} in {@code [1, Host.MAX_WEIGHT]} for the pool's balancer, reached over
   * HTTPS when {@code tls} is set: a connection is handed out once its handshake is done, and a
   * failed handshake is a connect failure.
   *
   * @param index the host's position in its origin pool's host list
   * @param ticker times connects for {@link #onConnectTimes}
   */
  public HostPool(
      String id,
      int index,
      InetSocketAddress address,
      int weight,
      int maxConnections,
      int maxPending,
      int connectTimeoutMillis,
      Class<? extends Channel> channelType,
      Ticker ticker,
      @Nullable OriginTls tls) {
    this.tls = tls;
    this.id = id;
    this.ticker = ticker;
    this.index = index;
    this.host = new Host(id, weight);
    this.address = address;
    this.maxConnections = maxConnections;
    this.maxPending = maxPending;
    this.connectTimeoutMillis = connectTimeoutMillis;
    this.channelType = channelType;
  }

  /** HTTPS to this host, or null for plain HTTP. */
  public @Nullable OriginTls tls() {
    return tls;
  }

  /** {@code origin/host:port}, from configuration. */
  public String id() {
    return id;
  }

  public InetSocketAddress address() {
    return address;
  }

  /** The position of this host in its pool's host list. */
  public int index() {
    return index;
  }

  /** The host as the pool's balancer sees it. */
  Host balancerHost() {
    return host;
  }

  /** Requests in flight to this host: acquired and not yet released or failed. */
  public int inflight() {
    return host.activeRequests();
  }

  /**
   * Response-head latency of this host, an exponentially weighted moving average (weight 1/8 per
   * attempt), or -1 before the first; for the admin API.
   */
  public long latencyNanos() {
    return latencyNanos.get();
  }

  void recordLatency(long nanos) {
    if (nanos < 0) {
      return;
    }
    latencyNanos.getAndUpdate(old -> old < 0 ? nanos : old + (nanos - old) / 8);
  }

  /** Where the time of each successful connect goes, in nanoseconds (the metrics' histogram). */
  public void onConnectTimes(LongConsumer nanos) {
    this.connectTimes = nanos;
  }

  /** Open connections (idle and busy). */
  public int openConnections() {
    return open.get();
  }

  /** Requests waiting for a connection. */
  public int pendingRequests() {
    return pending.get();
  }

  /** Must be called on {@code loop}; the acquirer is answered on {@code loop}. */
  public void acquire(EventLoop loop, Acquirer acquirer) {
    host.requestStarted();
    LoopPool lp = loops.computeIfAbsent(loop, LoopPool::new);
    Channel idle;
    while ((idle = lp.idle.pollFirst()) != null) {
      if (idle.isActive()) {
        acquirer.onConnection(idle);
        return;
      }
    }
    if (reserveSlot()) {
      connect(lp, acquirer);
      return;
    }
    if (pending.incrementAndGet() <= maxPending) {
      lp.waiters.add(acquirer);
      // A slot may have been freed between reserveSlot and add: make sure someone serves it.
      if (open.get() < maxConnections) {
        serveWaiter(lp);
      }
      return;
    }
    pending.decrementAndGet();
    host.requestFinished();
    acquirer.onLimitReached();
  }

  /**
   * Returns a connection after an exchange, on its own loop. A connection that is not {@code
   * reusable} (response not fully read, {@code Connection: close}, error) is closed.
   */
  public void release(Channel ch, boolean reusable) {
    host.requestFinished();
    if (!reusable || !ch.isActive()) {
      ch.close();
      return;
    }
    LoopPool lp = loops.computeIfAbsent(ch.eventLoop(), LoopPool::new);
    Acquirer w = pollLiveWaiter(lp);
    if (w != null) {
      w.onConnection(ch);
      return;
    }
    if (pending.get() > 0) {
      ch.close(); // waiters on other loops: the freed slot lets one of them connect
      return;
    }
    lp.idle.addFirst(ch);
  }

  /** Closes idle connections (shutdown). */
  public void closeIdle() {
    for (LoopPool lp : loops.values()) {
      lp.loop.execute(() -> {
        Channel c;
        while ((c = lp.idle.pollFirst()) != null) {
          c.close();
        }
      });
    }
  }

  private boolean reserveSlot() {
    for (; ; ) {
      int n = open.get();
      if (n >= maxConnections) {
        return false;
      }
      if (open.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  private @Nullable Acquirer pollLiveWaiter(LoopPool lp) {
    Acquirer w;
    while ((w = lp.waiters.poll()) != null) {
      pending.decrementAndGet();
      if (!w.isCancelled()) {
        return w;
      }
      host.requestFinished(); // the cancelled waiter's request ends here
    }
    return null;
  }

  private void connect(LoopPool lp, Acquirer acquirer) {
    long started = ticker.read();
    ChannelFuture f =
        new Bootstrap()
            .group(lp.loop)
            .channel(channelType)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.AUTO_READ, true)
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    if (tls != null) {
                      // The handshake may take as long as connecting, and at least a second: a
                      // cold JVM's first handshakes are slow, and a timeout here is a failure.
                      ch.pipeline()
                          .addLast(
                              "tls",
                              tls.newHandler(
                                  ch.alloc(), address, Math.max(1000, connectTimeoutMillis)));
                    }
                    ch.pipeline()
                        .addLast(OriginCodec.handlers(8192, 32 * 1024, 8192))
                        .addLast("origin", new OriginConnection().bind(ch));
                  }
                })
            .connect(address);
    Channel ch = f.channel();
    ch.closeFuture().addListener(done -> onSlotFreed());
    f.addListener(done -> {
      SslHandler ssl = done.isSuccess() && tls != null ? ch.pipeline().get(SslHandler.class) : null;
      if (ssl != null) {
        ssl.handshakeFuture()
            .addListener(hs -> {
              Throwable cause = hs.cause();
              if (cause != null && !(cause instanceof SSLException)) {
                // Closed or reset mid-handshake, or not TLS at all: still a TLS failure to
                // the client (tls_protocol_error), not a refused connection.
                SSLException wrapped = new SSLHandshakeException("handshake failed: " + cause);
                wrapped.initCause(cause);
                connected(ch, ch.newFailedFuture(wrapped), started, acquirer);
              } else {
                connected(ch, hs, started, acquirer);
              }
            });
      } else {
        connected(ch, done, started, acquirer);
      }
    });
  }

  /** Connecting (and, over HTTPS, the handshake) is over: hand the channel out, or fail. */
  private void connected(
      Channel ch, io.netty.util.concurrent.Future<?> done, long started, Acquirer acquirer) {
    if (done.isSuccess()) {
      connectTimes.accept(ticker.read() - started);
      if (acquirer.isCancelled()) {
        release(ch, true);
      } else {
        acquirer.onConnection(ch);
      }
    } else {
      ch.close(); // a failed handshake leaves a TCP connection open
      host.requestFinished();
      acquirer.onConnectFailure(done.cause());
    }
  }

  /** A connection closed: one waiter (on any loop) may connect now. */
  private void onSlotFreed() {
    open.decrementAndGet();
    if (pending.get() == 0) {
      return;
    }
    for (LoopPool lp : loops.values()) {
      if (!lp.waiters.isEmpty()) {
        lp.loop.execute(() -> serveWaiter(lp));
        return;
      }
    }
  }

  /** On lp's loop: give the first live waiter a new connection if a slot is free. */
  private void serveWaiter(LoopPool lp) {
    if (!lp.loop.inEventLoop()) {
      lp.loop.execute(() -> serveWaiter(lp));
      return;
    }
    if (lp.waiters.isEmpty() || !reserveSlot()) {
      return;
    }
    Acquirer w = pollLiveWaiter(lp);
    if (w == null) {
      open.decrementAndGet();
      return;
    }
    connect(lp, w);
  }
}
