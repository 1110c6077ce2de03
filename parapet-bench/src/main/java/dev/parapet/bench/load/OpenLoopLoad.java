package dev.parapet.bench.load;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
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
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AttributeKey;
import java.net.URI;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * An open-loop HTTP/1.1 load generator: requests are due at a constant rate whatever the server
 * does, and each one's latency runs from the moment it was due, not from when a connection was free
 * (closed-loop tools like wrk wait for the server and so hide overload: coordinated omission). One
 * event loop drives {@code connections} keep-alive connections per target; a request due while all
 * of its target's are busy waits in a queue and that wait counts. Loopback only by intent: it is a
 * benchmark tool.
 *
 * <pre>
 *   java -cp benchmarks.jar dev.parapet.bench.load.OpenLoopLoad URL[,URL...] RATE SECONDS [CONNECTIONS [WARMUP [INTERVAL]]]
 * </pre>
 *
 * Prints achieved rate, status counts and latency percentiles (ms) as one line per field, then the
 * percentiles of each status apart ({@code status_503_p99_ms}: a proxy's fast 503s and its slow
 * admitted 200s would otherwise blur into one distribution). With {@code INTERVAL} seconds (0, the
 * default, for none) it also prints one line per interval and status, {@code interval_s START
 * status CODE count N p50_ms X p99_ms Y max_ms Z} (status {@code error} for failed requests), each
 * request counted in the interval it was due in: how a long run went, not only its sum ({@code
 * measured_from_epoch_ms} puts them on the wall clock, beside what else happened). With {@code
 * -Dopenloop.split=HEADER=REGEX}, the figures of each status are also given per value that REGEX's
 * first group takes in the response's HEADER ({@code status_503.QUEUE_FULL_p99_ms} for {@code
 * -Dopenloop.split='Proxy-Status=\(([A-Z_]+)\)'}: Parapet's sheds at arrival apart from the
 * requests its queue dropped after a wait). The first {@code WARMUP} seconds of requests (default
 * {@link #WARMUP_SECONDS}) are sent but not measured: they warm this JVM's own JIT, whose compiler
 * threads compete for the machine's cores for several seconds after it starts. On two cores,
 * requests through a proxy under test were delayed by 2-6 ms, a few times per 100 ms, during the
 * generator's first 4-5 s and rarely after (the proxy's access log), so the bench scripts pass 8.
 *
 * <p>With several URLs, each gets {@code RATE} requests per second and its own connections and
 * figures (fields prefixed {@code t1.}, {@code t2.}, ...), their requests interleaved: the k-th
 * request due goes to target k mod n. Targets measured in alternating rounds each meet the host as
 * it is during their own round, and on a shared two-core VM a stall of tens of milliseconds in one
 * round and not the next moves a p99 several-fold; interleaved, every stall meets all targets
 * alike, and so does this generator's own share of each latency.
 *
 * <p>A connection the server closes is replaced by a new one to the same target (counted in {@code
 * reconnects}), so a long run keeps its {@code CONNECTIONS} however often the server closes them.
 */
public final class OpenLoopLoad {
  /** Seconds sent before measuring starts. */
  public static final double WARMUP_SECONDS = 3;

  private OpenLoopLoad() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println(
          "usage: OpenLoopLoad URL[,URL...] RATE SECONDS [CONNECTIONS [WARMUP [INTERVAL]]]");
      System.exit(2);
    }
    List<URI> uris = new ArrayList<>();
    for (String u : args[0].split(",", -1)) {
      URI uri = URI.create(u);
      if (!"127.0.0.1".equals(uri.getHost()) && !"localhost".equals(uri.getHost())) {
        System.err.println(
            "OpenLoopLoad: host : " + uri.getHost() + " (expected: 127.0.0.1 or localhost)");
        System.exit(2);
      }
      uris.add(uri);
    }
    double rate = Double.parseDouble(args[1]);
    double seconds = Double.parseDouble(args[2]);
    int connections = args.length > 3 ? Integer.parseInt(args[3]) : 64;
    double warmup = args.length > 4 ? Double.parseDouble(args[4]) : WARMUP_SECONDS;
    double interval = args.length > 5 ? Double.parseDouble(args[5]) : 0;
    String splitSpec = System.getProperty("openloop.split");
    Split split = splitSpec == null ? null : Split.parse(splitSpec);
    List<Result> results = run(uris, rate, seconds, connections, warmup, interval, split);
    for (int i = 0; i < results.size(); i++) {
      System.out.print(results.get(i).describe(results.size() == 1 ? "" : "t" + (i + 1) + "."));
    }
    System.out.flush();
  }

  /** The key of failed requests (no status) in the per-status and per-interval figures. */
  public static final String ERROR = "error";

  /**
   * Figures kept apart by the value a response header takes: {@code pattern}'s first group (or its
   * whole match) found in {@code header}'s value.
   */
  public record Split(String header, Pattern pattern) {
    /** {@code HEADER=REGEX}. */
    public static Split parse(String spec) {
      int eq = spec.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(
            "openloop.split : " + spec + " (expected: HEADER=REGEX)");
      }
      return new Split(spec.substring(0, eq), Pattern.compile(spec.substring(eq + 1)));
    }

    @Nullable String key(FullHttpResponse response) {
      String v = response.headers().get(header);
      if (v == null) {
        return null;
      }
      Matcher m = pattern.matcher(v);
      return !m.find() ? null : m.groupCount() > 0 ? m.group(1) : m.group();
    }
  }

  /**
   * What a run measured, for one target: {@code latencyByStatus} splits {@code latency} by status
   * ({@code "200"}, {@link #ERROR} for failed requests) and, with a {@link Split}, by status and
   * the split's value too ({@code "503.QUEUE_FULL"}); {@code intervals} is empty unless an interval
   * was asked.
   */
  public record Result(
      URI uri,
      long sent,
      long completed,
      long errors,
      long reconnects,
      long measuredFromEpochMillis,
      double seconds,
      Map<Integer, Long> statuses,
      Histogram latency,
      Map<String, Histogram> latencyByStatus,
      List<Interval> intervals) {
    /** One line per field, each field's name after {@code prefix}. */
    public String describe(String prefix) {
      StringBuilder b = new StringBuilder();
      if (!prefix.isEmpty()) {
        b.append(prefix).append("url ").append(uri).append('\n');
      }
      b.append(String.format(Locale.ROOT, "%srate_achieved %.0f%n", prefix, completed / seconds));
      b.append(prefix).append("sent ").append(sent).append('\n');
      b.append(prefix).append("completed ").append(completed).append('\n');
      b.append(prefix).append("errors ").append(errors).append('\n');
      statuses.forEach((k, v) ->
          b.append(prefix).append("status_").append(k).append(' ').append(v).append('\n'));
      for (double p : new double[] {50, 90, 99, 99.9}) {
        b.append(
            String.format(
                Locale.ROOT,
                "%sp%s_ms %.3f%n",
                prefix,
                trim(p),
                latency.getValueAtPercentile(p) / 1e6));
      }
      b.append(String.format(Locale.ROOT, "%smax_ms %.3f%n", prefix, latency.getMaxValue() / 1e6));
      b.append(prefix).append("reconnects ").append(reconnects).append('\n');
      b.append(prefix)
          .append("measured_from_epoch_ms ")
          .append(measuredFromEpochMillis)
          .append('\n');
      latencyByStatus.forEach((status, h) -> {
        String name = prefix + "status_" + status + "_";
        for (double p : new double[] {50, 99, 99.9}) {
          b.append(
              String.format(
                  Locale.ROOT, "%sp%s_ms %.3f%n", name, trim(p), h.getValueAtPercentile(p) / 1e6));
        }
        b.append(String.format(Locale.ROOT, "%smax_ms %.3f%n", name, h.getMaxValue() / 1e6));
      });
      for (Interval i : intervals) {
        i.latencyByStatus()
            .forEach((status, h) ->
                b.append(
                    String.format(
                        Locale.ROOT,
                        "%sinterval_s %s status %s count %d p50_ms %.3f p99_ms %.3f max_ms %.3f%n",
                        prefix,
                        trim(i.startSeconds()),
                        status,
                        h.getTotalCount(),
                        h.getValueAtPercentile(50) / 1e6,
                        h.getValueAtPercentile(99) / 1e6,
                        h.getMaxValue() / 1e6)));
      }
      return b.toString();
    }

    private static String trim(double p) {
      return p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p);
    }
  }

  /**
   * The requests due in one interval of the measured time, from {@code startSeconds} after
   * measuring began, by status (2 significant digits, microseconds: a long run keeps one set per
   * interval).
   */
  public record Interval(double startSeconds, Map<String, Histogram> latencyByStatus) {}

  /** {@link #run(List, double, double, int, double, double, Split)} without intervals or split. */
  public static List<Result> run(
      List<URI> uris, double rate, double seconds, int connections, double warmup)
      throws Exception {
    return run(uris, rate, seconds, connections, warmup, 0, null);
  }

  /**
   * Runs the load, {@code warmup} seconds unmeasured first, {@code rate} requests per second to
   * each of {@code uris}, and waits for every request to finish (or 10 s after the last was due).
   * One result per target, in the order given; figures per {@code interval} seconds too when it is
   * above 0, and per value of {@code split} when it is given.
   */
  public static List<Result> run(
      List<URI> uris,
      double rate,
      double seconds,
      int connections,
      double warmup,
      double interval,
      @Nullable Split split)
      throws Exception {
    // Epoll where the native transport loads: its timer (timerfd) sleeps until the next request is
    // due to the nanosecond. NIO's select() takes whole milliseconds, so Netty polls without
    // sleeping for anything nearer, and at 2,000 req/s (one request every 0.5 ms) this generator
    // spun a whole core: on a two-core machine, half the CPU the proxy under test competes for.
    EventLoopGroup group =
        new MultiThreadIoEventLoopGroup(
            1, Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    try {
      return new Driver(group, uris, rate, seconds, connections, warmup, interval, split).run();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  /** One target's connections, queue and figures; only the event loop touches them. */
  private static final class Target {
    final URI uri;

    /** The Host field as curl and wrk send it: the port too unless it is 80 (RFC 9110 §7.2). */
    final String host;

    final ArrayDeque<Channel> idle = new ArrayDeque<>();
    final ArrayDeque<Long> due = new ArrayDeque<>();
    final Histogram latency = new Histogram(TimeUnit.MINUTES.toNanos(1), 3);

    /**
     * Where warm-up requests are recorded and forgotten: the same recording code runs from the
     * first request, so the first measured ones do not meet it cold.
     */
    final Histogram warmLatency = new Histogram(TimeUnit.MINUTES.toNanos(1), 3);

    final Map<Integer, Long> statuses = new TreeMap<>();
    final Map<String, Histogram> latencyByStatus = new TreeMap<>();

    /** Per interval index, by status; only with an interval. */
    final TreeMap<Long, Map<String, Histogram>> intervals = new TreeMap<>();

    long sent;
    long completed;
    long errors;
    long reconnects;

    /** Connects to this target, its channels knowing it from the start. */
    @Nullable Bootstrap bootstrap;

    Target(URI uri) {
      this.uri = uri;
      this.host = uri.getPort() < 0 || uri.getPort() == 80 ? uri.getHost() : uri.getRawAuthority();
    }
  }

  /** Everything runs on the one event loop: no locks. */
  private static final class Driver {
    static final AttributeKey<Long> DUE = AttributeKey.valueOf("due");
    static final AttributeKey<Target> TARGET = AttributeKey.valueOf("target");

    final EventLoopGroup group;
    final List<Target> targets = new ArrayList<>();

    /** Requests due across all targets. */
    final long total;

    /** The time between two requests due, across all targets. */
    final double slotNanos;

    /** Requests per target sent before measuring starts. */
    final long warmupPerTarget;

    /** When, after the start, the first measured request is due. */
    final long warmupNanos;

    final int connections;

    /** Length of an interval of figures, 0 for none. */
    final long intervalNanos;

    final @Nullable Split split;

    final CompletableFuture<Void> allDone = new CompletableFuture<>();
    long start;

    /** Wall-clock time of {@code start}: where the intervals are on a timeline of other events. */
    long startEpochMillis;

    long slots;
    long finished;

    Driver(
        EventLoopGroup group,
        List<URI> uris,
        double rate,
        double seconds,
        int connections,
        double warmup,
        double interval,
        @Nullable Split split) {
      this.group = group;
      for (URI u : uris) {
        targets.add(new Target(u));
      }
      this.total = (long) (rate * (seconds + warmup)) * uris.size();
      this.slotNanos = 1e9 / rate / uris.size();
      this.warmupPerTarget = (long) (rate * warmup);
      this.warmupNanos = Math.round(warmupPerTarget * uris.size() * slotNanos);
      this.connections = connections;
      this.intervalNanos = Math.round(interval * 1e9);
      this.split = split;
    }

    List<Result> run() throws Exception {
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
      for (Target t : targets) {
        int port = t.uri.getPort() < 0 ? 80 : t.uri.getPort();
        Bootstrap tb = b.clone().attr(TARGET, t).remoteAddress(t.uri.getHost(), port);
        t.bootstrap = tb;
        for (int i = 0; i < connections; i++) {
          Channel ch = tb.connect().sync().channel();
          group.next().submit(() -> t.idle.add(ch)).sync();
        }
      }
      start = System.nanoTime();
      startEpochMillis = System.currentTimeMillis();
      group.next().execute(this::tick);
      long wait = Math.round(total * slotNanos) + TimeUnit.SECONDS.toNanos(10);
      try {
        // Completed by the event loop when the last response is in: this thread sleeps until
        // then, rather than asking the loop every few milliseconds (a wake-up of its own each
        // time, on the cores the targets use).
        allDone.get(wait, TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        // Some requests never finished: the figures are of those that did.
      }
      allDone.complete(null); // after a timeout: no more reconnecting while the loop shuts down
      long end = System.nanoTime();
      return group
          .next()
          .submit(() -> {
            List<Result> out = new ArrayList<>();
            for (Target t : targets) {
              out.add(
                  new Result(
                      t.uri,
                      t.sent - warmupPerTarget,
                      t.completed,
                      t.errors,
                      t.reconnects,
                      startEpochMillis + warmupNanos / 1_000_000,
                      (end - start - warmupNanos) / 1e9,
                      Map.copyOf(t.statuses),
                      t.latency.copy(),
                      copy(t.latencyByStatus),
                      intervals(t)));
            }
            return out;
          })
          .get();
    }

    static Map<String, Histogram> copy(Map<String, Histogram> byStatus) {
      Map<String, Histogram> out = new TreeMap<>();
      byStatus.forEach((k, v) -> out.put(k, v.copy()));
      return out;
    }

    List<Interval> intervals(Target t) {
      List<Interval> out = new ArrayList<>();
      t.intervals.forEach((k, v) -> out.add(new Interval(k * intervalNanos / 1e9, copy(v))));
      return out;
    }

    long dueAt(long slot) {
      return start + Math.round(slot * slotNanos);
    }

    /** Issues every request that is due by now, then sleeps until the next one is. */
    void tick() {
      long now = System.nanoTime();
      while (slots < total && now - dueAt(slots) >= 0) {
        Target t = targets.get((int) (slots % targets.size()));
        t.due.add(dueAt(slots));
        t.sent++;
        slots++;
      }
      for (Target t : targets) {
        drain(t);
      }
      if (slots < total) {
        long next = dueAt(slots) - System.nanoTime();
        group.next().schedule(this::tick, Math.max(0, next), TimeUnit.NANOSECONDS);
      }
    }

    void drain(Target t) {
      while (!t.due.isEmpty() && !t.idle.isEmpty()) {
        Channel ch = t.idle.poll();
        long dueAt = t.due.poll();
        ch.attr(DUE).set(dueAt);
        DefaultFullHttpRequest req =
            new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, t.uri.getRawPath());
        req.headers().set(HttpHeaderNames.HOST, t.host);
        ch.writeAndFlush(req);
      }
    }

    /**
     * Counts the request outstanding on {@code ch} (under its status, and under status and {@code
     * split} when there is one), then gives the connection the next one due, or closes it when the
     * server said it would not keep it ({@code reusable} false).
     */
    void done(Channel ch, int status, @Nullable String split, boolean reusable) {
      Target t = ch.attr(TARGET).get();
      Long dueAt = ch.attr(DUE).getAndSet(null);
      if (t == null || dueAt == null) {
        return; // nothing outstanding on it (a close after an error already counted)
      }
      long took = System.nanoTime() - dueAt;
      if (dueAt - start < warmupNanos) {
        // A warm-up request: sent, recorded apart, not measured.
        t.warmLatency.recordValue(Math.min(t.warmLatency.getHighestTrackableValue(), took));
      } else {
        long capped = Math.min(t.latency.getHighestTrackableValue(), took);
        t.latency.recordValue(capped);
        String key = status < 0 ? ERROR : Integer.toString(status);
        record(t, key, dueAt, capped);
        if (split != null) {
          record(t, key + "." + split, dueAt, capped);
        }
        if (status < 0) {
          t.errors++;
        } else {
          t.completed++;
          t.statuses.merge(status, 1L, Long::sum);
        }
      }
      if (ch.isActive()) {
        if (reusable) {
          t.idle.add(ch);
        } else {
          ch.close(); // channelInactive opens its replacement
        }
      }
      drain(t);
      if (++finished == total) {
        allDone.complete(null);
      }
    }

    void record(Target t, String key, long dueAt, long nanos) {
      t.latencyByStatus
          .computeIfAbsent(key, k -> new Histogram(TimeUnit.MINUTES.toNanos(1), 3))
          .recordValue(nanos);
      if (intervalNanos > 0) {
        t.intervals
            .computeIfAbsent((dueAt - start - warmupNanos) / intervalNanos, k -> new TreeMap<>())
            // Microseconds and 2 digits: ~20 KiB per histogram, for hundreds of intervals.
            .computeIfAbsent(key, k -> new Histogram(1_000, TimeUnit.MINUTES.toNanos(1), 2))
            .recordValue(nanos);
      }
    }

    /**
     * Opens a connection in place of one that closed, until every request has finished; a failed
     * connect is tried again 100 ms later (the requests due meanwhile wait, and that wait counts).
     */
    void reconnect(Target t) {
      Bootstrap tb = t.bootstrap;
      if (allDone.isDone() || tb == null) {
        return;
      }
      tb.connect()
          .addListener((ChannelFuture f) -> {
            if (f.isSuccess()) {
              t.reconnects++;
              t.idle.add(f.channel());
              drain(t);
            } else if (!allDone.isDone()) {
              group.next().schedule(() -> reconnect(t), 100, TimeUnit.MILLISECONDS);
            }
          });
    }

    final class Responses extends SimpleChannelInboundHandler<FullHttpResponse> {
      @Override
      protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse msg) {
        done(
            ctx.channel(),
            msg.status().code(),
            split == null ? null : split.key(msg),
            HttpUtil.isKeepAlive(msg));
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        done(ctx.channel(), -1, null, false);
        ctx.close();
      }

      /**
       * A connection closed with a request on it: that request failed (not left to time out). An
       * idle one closed by the server is taken out of the idle ones. Either way a new connection
       * takes its place while the run lasts.
       */
      @Override
      public void channelInactive(ChannelHandlerContext ctx) {
        Channel ch = ctx.channel();
        done(ch, -1, null, false);
        Target t = ch.attr(TARGET).get();
        if (t != null) {
          t.idle.remove(ch);
          reconnect(t);
        }
      }
    }
  }
}
