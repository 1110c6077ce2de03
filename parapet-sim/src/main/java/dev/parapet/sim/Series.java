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
    WS_CONNECTOR_MS;

    String header() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private static final int COLS = Col.values().length;
  private final long[] data;
  private final int seconds;

  Series(int seconds) {
    this.seconds = seconds;
    this.data = new long[seconds * COLS];
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
