package dev.parapet.proxy.config;

import java.time.Duration;

/**
 * The edge cache ({@code cache:}).
 *
 * @param maxSize memory bound in bytes of stored responses; 256 MiB
 * @param staleIfError how long past freshness a response may be served when the origin fails
 *     (errors, timeouts, open breaker, shed); 300 s
 * @param staleWhileRevalidate how long past freshness a response may be served while it is
 *     refreshed in the background; 60 s
 */
public record CacheConfig(DataSize maxSize, Duration staleIfError, Duration staleWhileRevalidate) {
  public static final CacheConfig DEFAULTS =
      new CacheConfig(DataSize.ofMebibytes(256), Duration.ofSeconds(300), Duration.ofSeconds(60));
}
