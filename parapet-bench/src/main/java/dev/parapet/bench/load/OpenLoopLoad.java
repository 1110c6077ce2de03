package dev.parapet.bench.load;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpVersion;
import java.net.URI;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * An open-loop HTTP/1.1 load generator: requests are due at a constant rate whatever the server
 * does, and each one's latency runs from the moment it was due, not from when a connection was free
 * (closed-loop tools like wrk wait for the server and so hide overload: coordinated omission). One
 * event loop drives {@code connections} keep-alive connections; a request due while all are busy
 * waits in a queue and that wait counts. Loopback only by intent: it is a benchmark tool.
 *
 * <pre>
 *   java -cp benchmarks.jar dev.parapet.bench.load.OpenLoopLoad URL RATE SECONDS [CONNECTIONS [WARMUP]]
 * </pre>
 *
 * Prints achieved rate, status counts and latency percentiles (ms) as one line per field. The first
 * {@code WARMUP} seconds of requests (default {@link #WARMUP_SECONDS}) are sent but not measured:
 * they warm this JVM's own JIT, whose compiler threads compete for the machine's cores for several
 * seconds after it starts. On two cores, requests through a proxy under test were delayed by 2-6
 * ms, a few times per 100 ms, during the generator's first 4-5 s and rarely after (the proxy's
 * access log), so the bench scripts pass 8.
 */
public final class OpenLoopLoad {
  /** Seconds sent before measuring starts. */
  public static final double WARMUP_SECONDS = 3;

  private OpenLoopLoad() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: OpenLoopLoad URL RATE SECONDS [CONNECTIONS [WARMUP]]");
      System.exit(2);
    }
    URI uri = URI.create(args[0]);
    double rate = Double.parseDouble(args[1]);
    double seconds = Double.parseDouble(args[2]);
    int connections = args.length > 3 ? Integer.parseInt(args[3]) : 64;
    double warmup = args.length > 4 ? Double.parseDouble(args[4]) : WARMUP_SECONDS;
    if (!"127.0.0.1".equals(uri.getHost()) && !"localhost".equals(uri.getHost())) {
      System.err.println(
          "OpenLoopLoad: host : " + uri.getHost() + " (expected: 127.0.0.1 or localhost)");
      System.exit(2);
    }
    Result r = run(uri, rate, seconds, connections, warmup);
    System.out.print(r.describe());
  }

  /** What a run measured. */
  public record Result(
      long sent,
      long completed,
      long errors,
      double seconds,
      Map<Integer, Long> statuses,
      Histogram latency) {
    public String describe() {
      StringBuilder b = new StringBuilder();
      b.append(String.format(Locale.ROOT, "rate_achieved %.0f%n", completed / seconds));
      b.append("sent ").append(sent).append('\n');
      b.append("completed ").append(completed).append('\n');
      b.append("errors ").append(errors).append('\n');
      statuses.forEach((k, v) -> b.append("status_").append(k).append(' ').append(v).append('\n'));
      for (double p : new double[] {50, 90, 99, 99.9}) {
        b.append(
            String.format(
                Locale.ROOT, "p%s_ms %.3f%n", trim(p), latency.getValueAtPercentile(p) / 1e6));
      }
      b.append(String.format(Locale.ROOT, "max_ms %.3f%n", latency.getMaxValue() / 1e6));
      return b.toString();
    }

    private static String trim(double p) {
      return p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p);
    }
  }

  /**
   * Runs the load, {@code warmup} seconds unmeasured first, and waits for every request to finish
   * (or 10 s after the last was due).
   */
  public static Result run(URI uri, double rate, double seconds, int connections, double warmup)
      throws Exception {
    // Epoll where the native transport loads: its timer (timerfd) sleeps until the next request is
    // due to the nanosecond. NIO's select() takes whole milliseconds, so Netty polls without
    // sleeping for anything nearer, and at 2,000 req/s (one request every 0.5 ms) this generator
    // spun a whole core: on a two-core machine, half the CPU the proxy under test competes for.
    EventLoopGroup group =
        new MultiThreadIoEventLoopGroup(
            1, Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    try {
      return new Driver(group, uri, rate, seconds, connections, warmup).run();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  /** Everything runs on the one event loop: no locks. */
  private static final class Driver {
    final EventLoopGroup group;
    final URI uri;
    final long intervalNanos;
    final long total;
    final long measuredFrom;
    final int connections;
    final Histogram latency = new Histogram(TimeUnit.MINUTES.toNanos(1), 3);

    /**
     * Where warm-up requests are recorded and forgotten: the same recording code runs from the
     * first request, so the first measured ones do not meet it cold.
     */
    final Histogram warmLatency = new Histogram(TimeUnit.MINUTES.toNanos(1), 3);

    final Map<Integer, Long> statuses = new TreeMap<>();
    final ArrayDeque<Channel> idle = new ArrayDeque<>();
    final ArrayDeque<Long> due = new ArrayDeque<>();
    long start;
    long sent;
    long completed;
    long errors;
    long warm;

    Driver(
        EventLoopGroup group,
        URI uri,
        double rate,
        double seconds,
        int connections,
        double warmup) {
      this.group = group;
      this.uri = uri;
      this.intervalNanos = (long) (1e9 / rate);
      this.total = (long) (rate * (seconds + warmup));
      this.measuredFrom = (long) (rate * warmup);
      this.connections = connections;
    }

    Result run() throws Exception {
      Bootstrap b =
          new Bootstrap()
              .group(group)
              .channel(Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class)
              .option(ChannelOption.TCP_NODELAY, true)
              .handler(
                  new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                      ch.pipeline()
                          .addLast(new HttpClientCodec())
                          .addLast(new HttpObjectAggregator(16 * 1024 * 1024))
                          .addLast(new Responses());
                    }
                  });
      int port = uri.getPort() < 0 ? 80 : uri.getPort();
      for (int i = 0; i < connections; i++) {
        Channel ch = b.connect(uri.getHost(), port).sync().channel();
        group.next().submit(() -> idle.add(ch)).sync();
      }
      start = System.nanoTime();
      group.next().execute(this::tick);
      long deadline = start + total * intervalNanos + TimeUnit.SECONDS.toNanos(10);
      while (System.nanoTime() - deadline < 0) {
        Long done = group.next().submit(() -> completed + errors + warm).get();
        if (done >= total) {
          break;
        }
        Thread.sleep(50); // the driver's own thread, not the event loop
      }
      long finished = System.nanoTime();
      return group
          .next()
          .submit(() ->
              new Result(
                  sent - measuredFrom,
                  completed,
                  errors,
                  (finished - start - measuredFrom * intervalNanos) / 1e9,
                  Map.copyOf(statuses),
                  latency.copy()))
          .get();
    }

    /** Issues every request that is due by now, then sleeps until the next one is. */
    void tick() {
      long now = System.nanoTime();
      while (sent < total && now - (start + sent * intervalNanos) >= 0) {
        due.add(start + sent * intervalNanos);
        sent++;
      }
      drain();
      if (sent < total) {
        long next = start + sent * intervalNanos - System.nanoTime();
        group.next().schedule(this::tick, Math.max(0, next), TimeUnit.NANOSECONDS);
      }
    }

    void drain() {
      while (!due.isEmpty() && !idle.isEmpty()) {
        Channel ch = idle.poll();
        long dueAt = due.poll();
        ch.attr(Responses.DUE).set(dueAt);
        DefaultFullHttpRequest req =
            new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri.getRawPath());
        req.headers().set(HttpHeaderNames.HOST, uri.getHost());
        ch.writeAndFlush(req);
      }
    }

    void done(Channel ch, int status) {
      Long dueAt = ch.attr(Responses.DUE).get();
      if (dueAt != null && (dueAt - start) / intervalNanos < measuredFrom) {
        warm++; // a warm-up request: sent, recorded apart, not measured
        warmLatency.recordValue(
            Math.min(warmLatency.getHighestTrackableValue(), System.nanoTime() - dueAt));
        if (ch.isActive()) {
          idle.add(ch);
        }
        drain();
        return;
      }
      if (dueAt != null) {
        latency.recordValue(
            Math.min(latency.getHighestTrackableValue(), System.nanoTime() - dueAt));
      }
      if (status < 0) {
        errors++;
      } else {
        completed++;
        statuses.merge(status, 1L, Long::sum);
      }
      if (ch.isActive()) {
        idle.add(ch);
      }
      drain();
    }

    final class Responses extends SimpleChannelInboundHandler<FullHttpResponse> {
      static final io.netty.util.AttributeKey<Long> DUE = io.netty.util.AttributeKey.valueOf("due");

      @Override
      protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse msg) {
        done(ctx.channel(), msg.status().code());
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        done(ctx.channel(), -1);
        ctx.close();
      }
    }
  }
}
