package dev.parapet.sim.replay;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.outcome.OutcomeClassifier;
import dev.parapet.core.outcome.SlowCallThreshold;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Shadow replay of access logs in one streaming pass (DESIGN "Shadow mode: compute and log
 * everything, reject nothing": tuning in shadow before enforcing).
 *
 * <p>How it works. The logs are read one after another, ordered by their first record's time. Each
 * line is parsed in place ({@link LineParser}); the record (start, latency, route id, outcome) goes
 * into the {@link ReorderWindow}, which releases records in start order once no later line can
 * start before them. Released records are gathered in a {@link Batch} and handed to every policy
 * ({@link PolicyRun}), on the reading thread or on worker threads (one read, many policies); then
 * they are gone. Times in results are nanoseconds from the first record.
 */
public final class LogReplay {
  /** Told about the position now and then (every 65,536 lines). */
  public interface Progress {
    void update(long lines, long bytes, long logTimeEpochNanos);
  }

  private static final int PROGRESS_EVERY = 1 << 16;
  private static final Outcome[] OUTCOMES = Outcome.values();

  private final List<LogSource> sources;
  private final ReplayOptions options;
  private final RouteTable routes;
  private final List<PolicyRun> runs = new ArrayList<>();
  private final OutcomeClassifier classifier;
  private final ReorderWindow window;
  private final @Nullable Progress progress;
  private final long fromNanos;
  private final long toNanos;

  private long lines;
  private long bytes;
  private long records;
  private long bad;
  private long outOfRange;
  private final List<String> badExamples = new ArrayList<>();
  private @Nullable String firstLate;
  private long base = Long.MIN_VALUE;
  private long lastStart;
  private long horizon;
  private Batch batch = new Batch();
  private final Dispatcher dispatcher;

  private LogReplay(
      List<LogSource> sources,
      List<ReplayPolicy> policies,
      ReplayOptions options,
      @Nullable Progress progress) {
    if (policies.isEmpty()) {
      throw new IllegalArgumentException("policies : none (expected: at least one)");
    }
    this.sources = sources;
    this.options = options;
    this.progress = progress;
    this.routes = new RouteTable(options.maxRoutes());
    for (ReplayPolicy p : policies) {
      // the first policy also counts the log's traffic per bin, off the reading thread
      runs.add(new PolicyRun(p.name(), p.policy(), routes, options, runs.isEmpty()));
    }
    this.classifier =
        OutcomeClassifier.standard().withSlowCalls(SlowCallThreshold.absolute(options.slow()));
    this.window = new ReorderWindow(options.window().toNanos());
    this.fromNanos = options.from() == null ? Long.MIN_VALUE : nanos(options.from());
    this.toNanos = options.to() == null ? Long.MAX_VALUE : nanos(options.to());
    this.dispatcher =
        options.threads() == 0 || runs.size() == 0
            ? new Dispatcher.Inline(runs)
            : new Dispatcher.Threaded(runs, options.threads());
  }

  private static long nanos(java.time.Instant i) {
    return i.getEpochSecond() * Scan.NANOS_PER_SECOND + i.getNano();
  }

  /**
   * Replays {@code sources} against every policy in one read.
   *
   * @throws IllegalArgumentException for more bad lines than {@code maxBadLines}, naming the first
   *     with its file and line number
   */
  public static ReplayResult run(
      List<LogSource> sources,
      List<ReplayPolicy> policies,
      ReplayOptions options,
      @Nullable Progress progress)
      throws IOException {
    LogReplay r = new LogReplay(sources, policies, options, progress);
    try {
      return r.run();
    } finally {
      r.dispatcher.close();
    }
  }

  private ReplayResult run() throws IOException {
    for (LogSource s : ordered()) {
      read(s);
    }
    while (!window.isEmpty()) {
      release();
    }
    flush();
    dispatcher.finish();
    List<PolicyResult> results = new ArrayList<>();
    for (PolicyRun run : runs) {
      results.add(new PolicyResult(run.name, run.policy, run.results()));
    }
    int maxInFlight = runs.stream().mapToInt(PolicyRun::maxInFlight).max().orElse(0);
    int inFlightCapacity = runs.stream().mapToInt(PolicyRun::inFlightCapacity).max().orElse(0);
    return new ReplayResult(
        results,
        traffic(),
        lines,
        records,
        bad,
        window.late(),
        outOfRange,
        List.copyOf(badExamples),
        firstLate,
        base == Long.MIN_VALUE ? 0 : base,
        lastStart,
        window.maxSize(),
        window.capacity(),
        maxInFlight,
        inFlightCapacity);
  }

  /** The sources by their first record's time (a source that cannot be peeked keeps its place). */
  private List<LogSource> ordered() throws IOException {
    if (sources.size() < 2) {
      return sources;
    }
    long[] first = new long[sources.size()];
    Integer[] order = new Integer[sources.size()];
    for (int i = 0; i < first.length; i++) {
      order[i] = i;
      first[i] = sources.get(i).reopenable() ? firstTime(sources.get(i)) : Long.MIN_VALUE;
    }
    Arrays.sort(order, Comparator.comparingLong((Integer i) -> first[i]).thenComparing(i -> i));
    List<LogSource> out = new ArrayList<>();
    for (Integer i : order) {
      out.add(sources.get(i));
    }
    return out;
  }

  private long firstTime(LogSource s) throws IOException {
    RouteTable scratch = new RouteTable(Integer.MAX_VALUE);
    try (LineReader in = new LineReader(s.open(), 1 << 14)) {
      LineParser p = null;
      while (in.next() && in.lineNo() <= 1000) {
        if (LineParser.blank(in.buf(), in.start(), in.end())) {
          continue;
        }
        if (p == null) {
          p = parser(in, scratch);
        }
        try {
          if (p.parse(in.buf(), in.start(), in.end())) {
            return p.time;
          }
        } catch (BadLineException e) {
          // the replay itself reports it
        }
      }
    }
    return Long.MAX_VALUE;
  }

  private LineParser parser(LineReader in, RouteTable table) {
    LogFormat f = options.format();
    if (f == LogFormat.AUTO) {
      f = LogFormat.detect(in.buf(), in.start(), in.end());
    }
    return f.parser(table, options.routeDepth());
  }

  private void read(LogSource source) throws IOException {
    try {
      readLines(source);
    } catch (IOException e) {
      // a truncated or corrupt file: name it and the line reached
      throw new IOException(
          source.name()
              + " : "
              + e.getMessage()
              + " (expected: a complete log; read "
              + lines
              + " lines)",
          e);
    }
  }

  private void readLines(LogSource source) throws IOException {
    InputStream raw = source.open();
    try (LineReader in = new LineReader(raw)) {
      LineParser p = null;
      long bytesBefore = bytes;
      long stopKey = Long.MAX_VALUE;
      while (in.next()) {
        lines++;
        if ((lines & (PROGRESS_EVERY - 1)) == 0 && progress != null) {
          bytes = bytesBefore + in.bytes();
          progress.update(lines, bytes, window.isEmpty() ? base : window.peekStart());
        }
        byte[] b = in.buf();
        if (p == null) {
          if (LineParser.blank(b, in.start(), in.end())) {
            continue;
          }
          p = parser(in, routes);
          horizon = Math.max(horizon, horizon(p));
          stopKey =
              toNanos == Long.MAX_VALUE
                  ? Long.MAX_VALUE
                  : toNanos + options.window().toNanos() + options.maxLatency().toNanos();
        }
        try {
          if (!p.parse(b, in.start(), in.end())) {
            continue;
          }
        } catch (BadLineException e) {
          badLine(source, in.lineNo(), e.getMessage());
          continue;
        }
        accept(p, source, in.lineNo());
        if (p.time > stopKey) {
          break; // past --to by more than the window: nothing later in this file is in range
        }
      }
      bytes = bytesBefore + in.bytes();
    }
  }

  private long horizon(LineParser p) {
    boolean end = options.timeIsEnd() != null ? options.timeIsEnd() : p.timeIsEnd();
    return options.window().toNanos() + (end ? options.maxLatency().toNanos() : 0);
  }

  private void badLine(LogSource source, long lineNo, @Nullable String message) {
    bad++;
    String where = source.name() + ":" + lineNo + ": " + message;
    if (badExamples.size() < 10) {
      badExamples.add(where);
    }
    if (bad > options.maxBadLines()) {
      throw new IllegalArgumentException(
          where
              + (options.maxBadLines() == 0
                  ? " (--max-bad-lines 0: the first bad line stops the replay)"
                  : " ("
                      + bad
                      + " bad lines, more than --max-bad-lines "
                      + options.maxBadLines()
                      + "; first: "
                      + badExamples.get(0)
                      + ")"));
    }
  }

  private void accept(LineParser p, LogSource source, long lineNo) {
    boolean end = options.timeIsEnd() != null ? options.timeIsEnd() : p.timeIsEnd();
    long start = end ? p.time - p.latencyNanos : p.time;
    if (start < fromNanos || start >= toNanos) {
      outOfRange++;
      return;
    }
    byte o = p.outcome;
    if (o == LineParser.BY_STATUS) {
      o =
          p.status == 0
              ? LineParser.outcome(Outcome.TIMEOUT)
              : LineParser.outcome(classifier.classifyResponse(p.status, p.latencyNanos, 0));
    }
    records++;
    if (!window.offer(start, p.latencyNanos, p.route, o, p.time)) {
      if (firstLate == null) {
        firstLate = source.name() + ":" + lineNo;
      }
      return;
    }
    while (window.ready(horizon)) {
      release();
    }
  }

  private void release() {
    long start = window.peekStart();
    if (base == Long.MIN_VALUE) {
      base = start;
    }
    long rel = start - base;
    batch.add(rel, window.peekLatency(), window.peekRoute(), window.peekOutcome());
    window.pop();
    lastStart = rel;
    if (batch.isFull()) {
      flush();
    }
  }

  private void flush() {
    if (batch.size > 0) {
      batch = dispatcher.dispatch(batch);
      batch.size = 0;
    }
  }

  private List<ReplayResult.Traffic> traffic() {
    List<ReplayResult.Traffic> out = new ArrayList<>();
    PolicyRun first = runs.get(0);
    for (int i = 0; i < routes.size(); i++) {
      Bins requests = first.trafficRequests(i);
      if (requests != null) {
        out.add(new ReplayResult.Traffic(routes.name(i), requests, first.trafficFailures(i)));
      }
    }
    out.sort(Comparator.comparing(ReplayResult.Traffic::route));
    return out;
  }
}
