package dev.parapet.proxy.upstream;

import dev.parapet.core.balance.HostHealth;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jspecify.annotations.Nullable;

/**
 * Active health checks of one origin pool's hosts, as a {@link HostHealth} the pool's balancer
 * combines with its outlier detector (DESIGN.md: {@code health_check: {path: /healthz, interval:
 * 5s, timeout: 1s, healthy: 2, unhealthy: 3}}).
 *
 * <p>How it works. Each host has its own check loop on one of the proxy's event loops: a {@code GET
 * path} on a fresh connection ({@code Connection: close}, never a pooled one, so a check neither
 * waits behind user requests nor leaves state in the pool), answered by a 2xx response head within
 * {@code timeout} to pass. The next check follows after {@code interval × U[0.9, 1.1)}, and the
 * first after {@code interval × U[0, 1)}, so hosts and proxies do not check in lockstep (Envoy's
 * {@code interval_jitter_percent}). {@code unhealthy} failures in a row take a host out; {@code
 * healthy} passes in a row bring it back, which counts as a return: balancers slow-start it. Hosts
 * start healthy, so a proxy serves at once after start or reload.
 *
 * <p>A check connection is closed with a reset ({@code SO_LINGER 0}) once the answer is known, so
 * frequent checks leave no TIME_WAIT sockets behind on the proxy's side.
 *
 * <p>Checks keep running for hosts that are out — they are the only traffic such hosts get. State
 * changes happen on the host's own loop (one writer per host); reads are lock-free.
 */
final class HealthChecker implements HostHealth {
  private static final int HEALTHY = 0;
  private static final int UNHEALTHY = 1;
  private static final int RETURNED = 2;

  private final String origin;
  private final List<HostPool> hosts;
  private final HostSelection.HealthCheck check;
  private final Class<? extends Channel> channelType;
  private final Ticker ticker;
  private final RandomSource random;
  private final AtomicIntegerArray state;
  private final AtomicLongArray returnedAt;
  private final AtomicLong generation = new AtomicLong();
  // Per host, touched only on that host's loop.
  private final int[] passes;
  private final int[] failures;
  private final AtomicLong checks = new AtomicLong();
  private final @Nullable ScheduledFuture<?>[] next;
  private volatile boolean stopped;

  HealthChecker(
      String origin,
      List<HostPool> hosts,
      HostSelection.HealthCheck check,
      Class<? extends Channel> channelType,
      Ticker ticker,
      RandomSource random) {
    this.origin = origin;
    this.hosts = hosts;
    this.check = check;
    this.channelType = channelType;
    this.ticker = ticker;
    this.random = random;
    this.state = new AtomicIntegerArray(hosts.size());
    this.returnedAt = new AtomicLongArray(hosts.size());
    this.passes = new int[hosts.size()];
    this.failures = new int[hosts.size()];
    this.next = new ScheduledFuture<?>[hosts.size()];
  }

  /** Starts one check loop per host, each on a loop of {@code group}. */
  void start(EventLoopGroup group) {
    long interval = check.interval().toNanos();
    for (int i = 0; i < hosts.size(); i++) {
      EventLoop loop = group.next();
      int host = i;
      long first = (long) (interval * random.nextDouble());
      loop.execute(() -> schedule(loop, host, first));
    }
  }

  /** Stops scheduling checks; a check in progress finishes and is not followed by another. */
  void stop() {
    stopped = true;
    for (int i = 0; i < next.length; i++) {
      ScheduledFuture<?> f = next[i];
      if (f != null) {
        f.cancel(false);
      }
    }
  }

  /** Checks sent so far (all hosts). */
  long checksSent() {
    return checks.get();
  }

  /** Whether the host passes its health checks (or has not failed enough of them yet). */
  boolean isHealthy(int host) {
    return state.get(host) != UNHEALTHY;
  }

  private void schedule(EventLoop loop, int host, long delayNanos) {
    if (stopped) {
      return;
    }
    try {
      next[host] = loop.schedule(() -> run(loop, host), delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The loops are shutting down (the proxy is closing): no more checks.
    }
  }

  private void run(EventLoop loop, int host) {
    if (stopped) {
      return;
    }
    checks.incrementAndGet();
    HostPool h = hosts.get(host);
    int timeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, check.timeout().toMillis()));
    Check c = new Check(loop, host);
    ChannelFuture f =
        new Bootstrap()
            .group(loop)
            .channel(channelType)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, timeoutMillis)
            .option(ChannelOption.TCP_NODELAY, true)
            // Close with a reset, as HAProxy closes its checks: a check every few seconds per
            // host would otherwise leave a TIME_WAIT socket on this side each time.
            .option(ChannelOption.SO_LINGER, 0)
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    ch.pipeline().addLast(new HttpClientCodec()).addLast(c);
                  }
                })
            .connect(h.address());
    c.channel = f.channel();
    c.timer = loop.schedule(() -> c.done(false), timeoutMillis, TimeUnit.MILLISECONDS);
    f.addListener(done -> {
      if (!done.isSuccess()) {
        c.done(false);
        return;
      }
      FullHttpRequest req =
          new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, check.path());
      req.headers()
          .set(HttpHeaderNames.HOST, h.address().getHostString() + ":" + h.address().getPort())
          .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE)
          .set(HttpHeaderNames.USER_AGENT, "parapet-health-check")
          .setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
      f.channel().writeAndFlush(req);
    });
  }

  /** One check of one host; every method runs on the host's loop. */
  private final class Check extends ChannelInboundHandlerAdapter {
    final EventLoop loop;
    final int host;
    @Nullable Channel channel;
    @Nullable ScheduledFuture<?> timer;
    boolean finished;

    Check(EventLoop loop, int host) {
      this.loop = loop;
      this.host = host;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (msg instanceof HttpResponse r) {
          done(!r.decoderResult().isFailure() && r.status().code() / 100 == 2);
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      done(false); // closed before a response head: a no-op when one came first
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      done(false);
    }

    void done(boolean passed) {
      if (finished) {
        return;
      }
      finished = true;
      ScheduledFuture<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
      Channel ch = channel;
      if (ch != null) {
        ch.close();
      }
      record(host, passed);
      long interval = check.interval().toNanos();
      schedule(loop, host, (long) (interval * (0.9 + 0.2 * random.nextDouble())));
    }
  }

  /** On the host's loop: counts the result and changes the host's state at a threshold. */
  private void record(int host, boolean passed) {
    if (passed) {
      failures[host] = 0;
      passes[host]++;
      if (state.get(host) == UNHEALTHY && passes[host] >= check.healthy()) {
        returnedAt.set(host, ticker.read());
        state.set(host, RETURNED);
        generation.incrementAndGet();
        log(host, "healthy");
      }
    } else {
      passes[host] = 0;
      failures[host]++;
      if (state.get(host) != UNHEALTHY && failures[host] >= check.unhealthy()) {
        state.set(host, UNHEALTHY);
        generation.incrementAndGet();
        log(host, "unhealthy");
      }
    }
  }

  private void log(int host, String to) {
    org.slf4j.LoggerFactory.getLogger("parapet.health")
        .info(
            "origin {} host {} is {} (health check {})",
            origin,
            hosts.get(host).id(),
            to,
            check.path());
  }

  @Override
  public boolean isEjected(int host) {
    return state.get(host) == UNHEALTHY;
  }

  @Override
  public boolean hasReturned(int host) {
    return state.get(host) == RETURNED;
  }

  @Override
  public long returnedAtNanos(int host) {
    return returnedAt.get(host);
  }

  @Override
  public long generation() {
    return generation.get();
  }
}
