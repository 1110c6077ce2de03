package dev.parapet.sim;

/**
 * The per-second counters of a run: one row per simulated second, one column per {@link Col}. Work
 * is attributed to the second it happened in; worker-seconds are attributed to the second a hold
 * ended.
 */
@SuppressWarnings("EnumOrdinal") // Col's ordinal is the column index of a dense array
final class Series {
  /** The CSV columns, in order. */
  enum Col {
    OFFERED,
    SICK_OFFERED,
    NO_WORKER,
    ATTEMPTS,
    RETRIES,
    ORIGIN_OK,
    USER_OK,
    SICK_USER_OK,
    HEALTHY_USER_OK,
    FAST_FAIL,
    TIMEOUTS,
    PROBES,
    BREAKERS_NOT_CLOSED,
    BUSY_WORKERS,
    ANSWERED,
    WS_EDGE_MS,
    WS_SHIELD_MS,
    WS_CONNECTOR_MS,
    SHED,
    LIMIT,
    HEDGES,
    HEDGE_WINS,
    ORIGIN_ACCEPTED,
    ORIGIN_REFUSED,
    ORIGIN_DROPPED,
    ORIGIN_BUSY_MS,
    ORIGIN_WASTED_MS,
    ORIGIN_SOJOURN_MS,
    ORIGIN_IN_SAMPLES,
    CACHE_HITS,
    STALE_SERVED;

    String header() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private static final int COLS = Col.values().length;

  /**
   * Latency histogram buckets per second: four per power of two of 1.024 µs units (values below 4
   * units get one bucket each), so a bucket is at most 25 % wide; 112 buckets reach past 10^10
   * units, longer than any timeout.
   */
  static final int LATENCY_BUCKETS = 112;

  private final long[] data;
  private final long[] latency;
  private final int seconds;

  Series(int seconds) {
    this.seconds = seconds;
    this.data = new long[seconds * COLS];
    this.latency = new long[seconds * LATENCY_BUCKETS];
  }

  /** Counts one answer that took {@code nanos}, in the second it ended. */
  void addLatency(int second, long nanos) {
    if (second >= 0 && second < seconds) {
      latency[second * LATENCY_BUCKETS + latencyBucket(nanos)]++;
    }
  }

  static int latencyBucket(long nanos) {
    long v = Math.max(0, nanos) >>> 10;
    if (v < 4) {
      return (int) v;
    }
    int e = 63 - Long.numberOfLeadingZeros(v);
    int sub = (int) ((v >>> (e - 2)) & 3);
    return Math.min(LATENCY_BUCKETS - 1, 4 + (e - 2) * 4 + sub);
  }

  /** The middle of bucket {@code b}, in milliseconds. */
  static double bucketMidMillis(int b) {
    if (b < 4) {
      return (b + 0.5) * 1024 / 1e6;
    }
    int e = (b - 4) / 4 + 2;
    int sub = (b - 4) % 4;
    double low = (double) ((4L + sub) << (e - 2));
    double high = (double) ((5L + sub) << (e - 2));
    return (low + high) / 2 * 1024 / 1e6;
  }

  /**
   * The {@code q} quantile (0 < q ≤ 1) of the latencies counted in {@code second}, in milliseconds
   * (the middle of its histogram bucket), or NaN when none ended in that second.
   */
  double latencyQuantileMillis(int second, double q) {
    return latencyQuantileMillis(second, second + 1, q);
  }

  /** The {@code q} quantile of the latencies counted in seconds [from, to); NaN when none. */
  double latencyQuantileMillis(int from, int to, double q) {
    int lo = Math.max(0, from);
    int hi = Math.min(to, seconds);
    long total = 0;
    for (int i = lo * LATENCY_BUCKETS; i < hi * LATENCY_BUCKETS; i++) {
      total += latency[i];
    }
    if (total == 0) {
      return Double.NaN;
    }
    long rank = (long) Math.ceil(q * total);
    long seen = 0;
    for (int b = 0; b < LATENCY_BUCKETS; b++) {
      for (int sec = lo; sec < hi; sec++) {
        seen += latency[sec * LATENCY_BUCKETS + b];
      }
      if (seen >= rank) {
        return bucketMidMillis(b);
      }
    }
    return bucketMidMillis(LATENCY_BUCKETS - 1);
  }

  int seconds() {
    return seconds;
  }

  void add(int second, Col col, long v) {
    if (second >= 0 && second < seconds) {
      data[second * COLS + col.ordinal()] += v;
    }
  }

  void set(int second, Col col, long v) {
    if (second >= 0 && second < seconds) {
      data[second * COLS + col.ordinal()] = v;
    }
  }

  long get(int second, Col col) {
    return data[second * COLS + col.ordinal()];
  }

  /** Sum of {@code col} over seconds [from, to). */
  long sum(Col col, int from, int to) {
    long s = 0;
    for (int i = Math.max(0, from); i < Math.min(to, seconds); i++) {
      s += get(i, col);
    }
    return s;
  }

  long max(Col col, int from, int to) {
    long m = 0;
    for (int i = Math.max(0, from); i < Math.min(to, seconds); i++) {
      m = Math.max(m, get(i, col));
    }
    return m;
  }
}
