package dev.parapet.proxy.config;

import java.time.Duration;
import java.util.Set;

/**
 * Reads the {@code http2:} block: stream and header-list limits, the flow-control window, and how
 * many stream resets a client may send before it is treated as a rapid-reset attack.
 */
final class Http2ConfigReader {
  static final Set<String> KEYS =
      MappingReader.keys(
          "max_concurrent_streams", "max_header_list_size", "initial_window_size", "resets");
  private static final Set<String> RESETS = MappingReader.keys("count", "within");

  /** RFC 9113 §6.5.2: the largest SETTINGS_INITIAL_WINDOW_SIZE. */
  private static final long MAX_WINDOW = (1L << 31) - 1;

  /** The decoder holds a header list in memory: 1 MiB is far above any real request's. */
  private static final long MAX_HEADER_LIST = 1024 * 1024;

  private Http2ConfigReader() {}

  static Http2Config read(MappingReader r) {
    Http2Config d = Http2Config.DEFAULTS;
    int streams =
        r.integer("max_concurrent_streams", d.maxConcurrentStreams(), 1, MappingReader.MAX_COUNT);
    int headerList = size(r, "max_header_list_size", d.maxHeaderListSize(), 1024, MAX_HEADER_LIST);
    int window = size(r, "initial_window_size", d.initialWindowSize(), 1, MAX_WINDOW);
    MappingReader resets = r.mapping("resets", RESETS);
    int count = resets.integer("count", d.maxResets(), 1, MappingReader.MAX_COUNT);
    Duration within = resets.positiveDuration("within", d.resetWindow());
    return new Http2Config(streams, headerList, window, count, within);
  }

  private static int size(MappingReader r, String key, int base, long min, long max) {
    DataSize s = r.parsed(key, new DataSize(base), "a size like 16KiB", DataSize::parse);
    if (s.bytes() < min || s.bytes() > max) {
      r.error(key, "must be in [" + min + ", " + max + "] bytes, was " + s.bytes());
      return base;
    }
    return (int) s.bytes();
  }
}
