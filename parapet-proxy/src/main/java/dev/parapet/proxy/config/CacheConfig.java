package dev.parapet.proxy.config;

import java.time.Duration;
import java.util.List;

/**
 * The edge cache ({@code cache:}).
 *
 * @param maxSize memory bound in bytes of stored responses; 256 MiB
 * @param staleIfError how long past freshness a response may be served when the origin failed in
 *     one of the ways {@code staleIfErrorOn} lists (a response's own {@code stale-if-error} wins);
 *     300 s
 * @param staleWhileRevalidate how long past freshness a response without its own {@code
 *     stale-while-revalidate} may be served while it is refreshed in the background; 0 s (only the
 *     origin grants it)
 * @param staleIfErrorOn the failures {@code staleIfError} covers: {@code timeout}, {@code
 *     connect_error}, {@code breaker_open}, {@code shed}, {@code pool_limit} (the origin could not
 *     be asked or did not answer) by default; {@code 5xx} adds the origin's own 500/502/503/504
 * @param heuristicFraction {@code heuristic.fraction}: the share of {@code Date − Last-Modified} a
 *     response without freshness information is fresh for; 10 % ({@code 0%} turns it off)
 * @param heuristicMax {@code heuristic.max}: the cap of that heuristic lifetime; 24 h
 */
public record CacheConfig(
    DataSize maxSize,
    Duration staleIfError,
    Duration staleWhileRevalidate,
    List<String> staleIfErrorOn,
    double heuristicFraction,
    Duration heuristicMax) {
  /** The names {@code stale_if_error_on} accepts. */
  public static final List<String> TRIGGERS =
      List.of("5xx", "timeout", "connect_error", "breaker_open", "shed", "pool_limit");

  public static final CacheConfig DEFAULTS =
      new CacheConfig(
          DataSize.ofMebibytes(256),
          Duration.ofSeconds(300),
          Duration.ZERO,
          List.of("timeout", "connect_error", "breaker_open", "shed", "pool_limit"),
          0.10,
          Duration.ofHours(24));

  public CacheConfig {
    staleIfErrorOn = List.copyOf(staleIfErrorOn);
  }
}
