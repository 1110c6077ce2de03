package dev.parapet.proxy.config;

import java.util.Set;

/** Reads the {@code cache:} block, the edge cache's size and how long stale answers may serve. */
final class CacheConfigReader {
  static final Set<String> KEYS =
      MappingReader.keys("max_size", "stale_if_error", "stale_while_revalidate");

  private CacheConfigReader() {}

  static CacheConfig read(MappingReader r) {
    CacheConfig d = CacheConfig.DEFAULTS;
    return new CacheConfig(
        r.parsed("max_size", d.maxSize(), "a size like 256MiB", DataSize::parse),
        r.duration("stale_if_error", d.staleIfError()),
        r.duration("stale_while_revalidate", d.staleWhileRevalidate()));
  }
}
