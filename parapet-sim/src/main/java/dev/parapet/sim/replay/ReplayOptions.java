package dev.parapet.sim.replay;

import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * How a log is read and judged.
 *
 * @param format the log format, or {@link LogFormat#AUTO} to recognise it per file
 * @param slow latency above which an answer is a slow call
 * @param window how far out of order records may be (by the log's own time)
 * @param maxLatency for logs written at the end of requests: the longest latency expected; the
 *     replay trails the log by window + maxLatency so that starts come in order
 * @param from first start time replayed (inclusive), or null
 * @param to last start time replayed (exclusive), or null
 * @param maxBadLines bad lines skipped (counted, the first shown) before the replay stops
 * @param routeDepth path segments that name a route, for logs of paths (nginx, Envoy)
 * @param timeIsEnd overrides the format's meaning of its time field, or null
 * @param troubleRate share of failed or slow requests in a trouble bin that makes it trouble
 * @param troubleBin width of the bins trouble is judged in
 * @param troubleMinRequests fewest requests in a bin for it to be judged trouble
 * @param maxRoutes distinct routes allowed (their state is kept for the whole replay)
 * @param threads policies replayed on this many threads beside the reader (0: all on the reader)
 * @param seed the breakers' jitter
 */
public record ReplayOptions(
    LogFormat format,
    Duration slow,
    Duration window,
    Duration maxLatency,
    @Nullable Instant from,
    @Nullable Instant to,
    long maxBadLines,
    int routeDepth,
    @Nullable Boolean timeIsEnd,
    double troubleRate,
    Duration troubleBin,
    int troubleMinRequests,
    int maxRoutes,
    int threads,
    long seed) {

  public static ReplayOptions defaults() {
    return new ReplayOptions(
        LogFormat.AUTO,
        Duration.ofMillis(500),
        Duration.ofSeconds(5),
        Duration.ofSeconds(60),
        null,
        null,
        0,
        1,
        null,
        0.2,
        Duration.ofSeconds(10),
        10,
        1000,
        0,
        0);
  }

  public ReplayOptions {
    check(!slow.isNegative() && !slow.isZero(), "slow", slow, "> 0");
    check(!window.isNegative(), "window", window, ">= 0");
    check(!maxLatency.isNegative(), "max-latency", maxLatency, ">= 0");
    check(maxBadLines >= 0, "max-bad-lines", maxBadLines, ">= 0");
    check(routeDepth >= 1, "route-depth", routeDepth, ">= 1");
    check(troubleRate > 0 && troubleRate <= 1, "trouble-rate", troubleRate, "in (0, 1]");
    check(!troubleBin.isNegative() && !troubleBin.isZero(), "trouble-bin", troubleBin, "> 0");
    check(maxRoutes >= 1, "max-routes", maxRoutes, ">= 1");
    check(threads >= 0, "threads", threads, ">= 0");
    if (from != null && to != null) {
      check(from.isBefore(to), "from", from, "before --to " + to);
    }
  }

  private static void check(boolean ok, String what, Object found, String expected) {
    if (!ok) {
      throw new IllegalArgumentException(
          "--" + what + " : " + found + " (expected: " + expected + ")");
    }
  }

  public ReplayOptions withFormat(LogFormat f) {
    return new ReplayOptions(
        f,
        slow,
        window,
        maxLatency,
        from,
        to,
        maxBadLines,
        routeDepth,
        timeIsEnd,
        troubleRate,
        troubleBin,
        troubleMinRequests,
        maxRoutes,
        threads,
        seed);
  }

  public ReplayOptions withSlow(Duration d) {
    return new ReplayOptions(
        format,
        d,
        window,
        maxLatency,
        from,
        to,
        maxBadLines,
        routeDepth,
        timeIsEnd,
        troubleRate,
        troubleBin,
        troubleMinRequests,
        maxRoutes,
        threads,
        seed);
  }

  public ReplayOptions withWindow(Duration w, Duration maxLat) {
    return new ReplayOptions(
        format,
        slow,
        w,
        maxLat,
        from,
        to,
        maxBadLines,
        routeDepth,
        timeIsEnd,
        troubleRate,
        troubleBin,
        troubleMinRequests,
        maxRoutes,
        threads,
        seed);
  }

  public ReplayOptions withRange(@Nullable Instant f, @Nullable Instant t) {
    return new ReplayOptions(
        format,
        slow,
        window,
        maxLatency,
        f,
        t,
        maxBadLines,
        routeDepth,
        timeIsEnd,
        troubleRate,
        troubleBin,
        troubleMinRequests,
        maxRoutes,
        threads,
        seed);
  }

  public ReplayOptions withMaxBadLines(long n) {
    return new ReplayOptions(
        format,
        slow,
        window,
        maxLatency,
        from,
        to,
        n,
        routeDepth,
        timeIsEnd,
        troubleRate,
        troubleBin,
        troubleMinRequests,
        maxRoutes,
        threads,
        seed);
  }

  public ReplayOptions withRouteDepth(int d) {
    return new ReplayOptions(
        format,
        slow,
        window,
        maxLatency,
        from,
        to,
        maxBadLines,
        d,
        timeIsEnd,
        troubleRate,
        troubleBin,
        troubleMinRequests,
        maxRoutes,
        threads,
        seed);
  }

  public ReplayOptions withTimeIsEnd(@Nullable Boolean end) {
    return new ReplayOptions(
        format,
        slow,
        window,
        maxLatency,
        from,
        to,
        maxBadLines,
        routeDepth,
        end,
        troubleRate,
        troubleBin,
        troubleMinRequests,
        maxRoutes,
        threads,
        seed);
  }

  public ReplayOptions withTrouble(double rate, Duration bin, int minRequests) {
    return new ReplayOptions(
        format,
        slow,
        window,
        maxLatency,
        from,
        to,
        maxBadLines,
        routeDepth,
        timeIsEnd,
        rate,
        bin,
        minRequests,
        maxRoutes,
        threads,
        seed);
  }

  public ReplayOptions withThreads(int n) {
    return new ReplayOptions(
        format,
        slow,
        window,
        maxLatency,
        from,
        to,
        maxBadLines,
        routeDepth,
        timeIsEnd,
        troubleRate,
        troubleBin,
        troubleMinRequests,
        maxRoutes,
        n,
        seed);
  }

  long troubleBinNanos() {
    return troubleBin.toNanos();
  }
}
