package dev.parapet.proxy.demo;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * An open-loop HTTP/1.1 load generator: request {@code i} is due at {@code start + i / rate}
 * whatever the server does, and its latency runs from that due time (no coordinated omission: a
 * slow server cannot slow the arrivals down, and time spent waiting for a connection counts).
 *
 * <p>Two things it does differently from a fixed-pool generator, on purpose:
 *
 * <ul>
 *   <li>Connections are opened on demand, up to {@code maxConnections}. A fixed pool caps the
 *       offered load at {@code pool / latency} (Little's law): 64 connections against a 4 s
 *       brownout would offer 16 requests a second instead of the configured rate, hiding the
 *       pile-up the demo is meant to show.
 *   <li>It measures from the very first request, so it warms up before measuring instead: {@link
 *       Demo} sends a short unrecorded warm-up run first, so that the JIT's first stalls (100 to
 *       300 ms, queueing every request due meanwhile) do not land in the tails. (parapet-bench's
 *       {@code OpenLoopLoad} sends its warm-up in the same run and leaves it out of the figures.)
 * </ul>
 *
 * <p>Everything runs on one event loop: the tick that issues due requests reschedules itself for
 * the next due time (no per-request timers), and a sweep every 50 ms fails requests older than the
 * client timeout. What each request did is written into primitive arrays indexed by request number,
 * read by {@link Recording} once the run is over.
 */
final class LoadGenerator implements AutoCloseable {
  /** Status recorded when the connection failed or closed before an answer. */
  static final int ERROR = -1;

  /** Status recorded when the client gave up after the timeout. */
  static final int CLIENT_TIMEOUT = -2;

  /** Which request goes where: every third one is static, the rest API. */
  static boolean isStatic(int i) {
    return i % 3 == 2;
  }

  static String path(int i) {
    return isStatic(i) ? "/static/app-" + (i % 8) + ".js" : "/api/items/" + (i % 64);
  }

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(
          1, new DefaultThreadFactory("parapet-demo-load", true), NioIoHandler.newFactory());
  private final EventLoop loop = (EventLoop) group.next();
  private final InetSocketAddress target;
  private final int maxConnections;
  private final long timeoutNanos;

  LoadGenerator(InetSocketAddress target, int maxConnections, long timeoutNanos) {
    this.target = target;
    this.maxConnections = maxConnections;
    this.timeoutNanos = timeoutNanos;
  }

  /** Starts a run of {@code durationNanos} at {@code rate} requests a second. */
  Run start(double rate, long durationNanos) {
    Run run = new Run(rate, durationNanos);
    loop.execute(run::begin);
    return run;
  }

  @Override
  public void close() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /**
   * Whether a {@code Proxy-Status} says a breaker refused the request before any origin attempt
   * ({@code details="breaker open"}). A retry that a breaker refused because it opened during the
   * request says more ({@code breaker open; the retry was refused after a failed attempt}): that
   * caller waited for the first attempt, and counting it as a fast fail would put a hanging
   * origin's timeout into the fast-fail latency.
   */
  static boolean isFastFail(@Nullable String proxyStatus) {
    return proxyStatus != null
        && proxyStatus.toLowerCase(Locale.ROOT).contains("details=\"breaker open\"");
  }

  /**
   * Whether a {@code Cache-Status} says the answer is a stored response served past its freshness:
   * a member (any tier's) with a negative {@code ttl} (RFC 9211 §2.4). Not {@code fwd=stale}: that
   * member says the cache forwarded the request because its copy was stale, and what came back (
   * {@code fwd-status=200; stored}) is the origin's fresh answer, with the origin's latency.
   */
  static boolean isStaleAnswer(@Nullable String cacheStatus) {
    if (cacheStatus == null) {
      return false;
    }
    boolean quoted = false;
    int start = 0;
    for (int i = 0; i <= cacheStatus.length(); i++) {
      char ch = i < cacheStatus.length() ? cacheStatus.charAt(i) : ';';
      if (ch == '"' && (i == 0 || cacheStatus.charAt(i - 1) != '\\')) {
        quoted = !quoted;
      } else if (!quoted && (ch == ';' || ch == ',')) {
        String param = cacheStatus.substring(start, i).trim();
        if (param.regionMatches(true, 0, "ttl=-", 0, 5)) {
          return true;
        }
        start = i + 1;
      }
    }
    return false;
  }

  /** What every request of a run did. Read it only after {@link Run#done()} completed. */
  record Recording(
      long startNanos,
      long intervalNanos,
      int count,
      int[] status,
      long[] latencyNanos,
      boolean[] fastFail,
      boolean[] stale) {

    long dueNanos(int i) {
      return i * intervalNanos;
    }
  }

  /** One run: live counters for the progress line, then the {@link Recording}. */
  final class Run {
    final long intervalNanos;
    final int total;
    final int[] status;
    final long[] latency;
    final boolean[] fastFail;
    final boolean[] stale;
    final AtomicLong sent = new AtomicLong();
    final AtomicLong ok = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong fastFails = new AtomicLong();
    final AtomicLong inflight = new AtomicLong();
    private final CompletableFuture<Recording> done = new CompletableFuture<>();
    private final ArrayDeque<Channel> idle = new ArrayDeque<>();
    private final ArrayDeque<Integer> waiting = new ArrayDeque<>();
    private final Set<Conn> busy = new HashSet<>();
    private final Bootstrap bootstrap;
    private volatile long start;
    private int next;
    private int finished;
    private int connections;

    Run(double rate, long durationNanos) {
      this.intervalNanos = Math.max(1, Math.round(1e9 / rate));
      this.total = (int) Math.max(1, durationNanos / intervalNanos);
      this.status = new int[total];
      this.latency = new long[total];
      this.fastFail = new boolean[total];
      this.stale = new boolean[total];
      this.bootstrap =
          new Bootstrap()
              .group(loop)
              .channel(NioSocketChannel.class)
              .option(ChannelOption.TCP_NODELAY, true)
              .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 2000)
              .handler(
                  new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                      ch.pipeline()
                          .addLast(new HttpClientCodec())
                          .addLast(new HttpObjectAggregator(1 << 20))
                          .addLast(new Conn());
                    }
                  });
    }

    /** When request 0 was due ({@link System#nanoTime()}); valid once the run began. */
    long startNanos() {
      return start;
    }

    int total() {
      return total;
    }

    CompletableFuture<Recording> done() {
      return done;
    }

    void begin() {
      start = System.nanoTime();
      tick();
      sweep();
    }

    /** Issues every request due by now, then schedules itself for the next due time. */
    private void tick() {
      long now = System.nanoTime();
      while (next < total && now - (start + next * intervalNanos) >= 0) {
        int i = next++;
        sent.incrementAndGet();
        inflight.incrementAndGet();
        dispatch(i);
      }
      if (next < total) {
        long wait = start + next * intervalNanos - System.nanoTime();
        loop.schedule(this::tick, Math.max(0, wait), TimeUnit.NANOSECONDS);
      }
    }

    private void dispatch(int i) {
      Channel ch = idle.pollLast();
      while (ch != null && !ch.isActive()) {
        ch = idle.pollLast();
      }
      if (ch != null) {
        send(ch, i);
      } else if (connections < maxConnections) {
        connections++;
        ChannelFuture f = bootstrap.connect(target);
        f.addListener(x -> {
          if (f.isSuccess()) {
            send(f.channel(), i);
          } else {
            connections--;
            finish(i, ERROR, false, false);
          }
        });
      } else {
        waiting.add(i);
      }
    }

    private void send(Channel ch, int i) {
      Conn c = ch.pipeline().get(Conn.class);
      c.current = i;
      busy.add(c);
      DefaultFullHttpRequest req =
          new DefaultFullHttpRequest(
              HttpVersion.HTTP_1_1, HttpMethod.GET, path(i), Unpooled.EMPTY_BUFFER);
      req.headers().set(HttpHeaderNames.HOST, "demo.parapet.local");
      ch.writeAndFlush(req);
    }

    /** Fails requests the client would have given up on; runs every 50 ms until the run is done. */
    private void sweep() {
      long now = System.nanoTime();
      for (Conn c : busy.toArray(new Conn[0])) {
        int i = c.current;
        if (i >= 0 && now - (start + i * intervalNanos) - timeoutNanos > 0) {
          c.current = -1;
          busy.remove(c);
          finish(i, CLIENT_TIMEOUT, false, false);
          Channel ch = c.channel;
          if (ch != null) {
            ch.close();
          }
        }
      }
      if (!done.isDone()) {
        loop.schedule(this::sweep, 50, TimeUnit.MILLISECONDS);
      }
    }

    private void finish(int i, int code, boolean isFastFail, boolean isStale) {
      status[i] = code;
      latency[i] = System.nanoTime() - (start + i * intervalNanos);
      fastFail[i] = isFastFail;
      stale[i] = isStale;
      inflight.decrementAndGet();
      if (code >= 200 && code < 300) {
        ok.incrementAndGet();
      } else {
        failed.incrementAndGet();
      }
      if (isFastFail) {
        fastFails.incrementAndGet();
      }
      if (++finished == total) {
        for (Channel ch : idle) {
          ch.close();
        }
        idle.clear();
        done.complete(new Recording(start, intervalNanos, total, status, latency, fastFail, stale));
      }
    }

    private void released(Channel ch) {
      Integer waitingRequest = waiting.poll();
      if (waitingRequest != null) {
        if (ch.isActive()) {
          send(ch, waitingRequest);
        } else {
          dispatch(waitingRequest);
        }
      } else if (ch.isActive()) {
        idle.add(ch);
      }
    }

    /** One client connection; carries at most one request at a time. */
    final class Conn extends SimpleChannelInboundHandler<FullHttpResponse> {
      int current = -1;
      @Nullable Channel channel;

      @Override
      public void channelActive(ChannelHandlerContext ctx) throws Exception {
        channel = ctx.channel();
        super.channelActive(ctx);
      }

      @Override
      protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse msg) {
        int i = current;
        if (i < 0) {
          return;
        }
        current = -1;
        busy.remove(this);
        String proxyStatus = msg.headers().get("Proxy-Status");
        String cacheStatus = msg.headers().get("Cache-Status");
        boolean isFastFail = isFastFail(proxyStatus);
        boolean isStale = isStaleAnswer(cacheStatus);
        finish(i, msg.status().code(), isFastFail, isStale);
        if (!HttpUtil.isKeepAlive(msg)) {
          ctx.close();
        }
        released(ctx.channel());
      }

      @Override
      public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        connections--;
        busy.remove(this);
        int i = current;
        current = -1;
        if (i >= 0) {
          finish(i, ERROR, false, false);
        }
        Integer waitingRequest = waiting.poll();
        if (waitingRequest != null) {
          dispatch(waitingRequest);
        }
        super.channelInactive(ctx);
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
      }
    }
  }
}
