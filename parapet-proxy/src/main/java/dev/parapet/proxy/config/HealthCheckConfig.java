package dev.parapet.proxy.config;

import java.time.Duration;

/**
 * Active health checks of each host ({@code health_check:}). Off unless the origin has a {@code
 * health_check:} block: an origin (or the next tier) that does not serve the path would otherwise
 * be marked down as a whole. {@code health_check: {}} turns them on with the defaults.
 *
 * @param path requested with GET; a 2xx is healthy; {@code /healthz}
 * @param interval between checks of one host, jittered; 5 s
 * @param timeout a check slower than this failed; 1 s
 * @param healthy consecutive passes that bring a host back; 2
 * @param unhealthy consecutive failures that take a host out; 3
 */
public record HealthCheckConfig(
    boolean enabled, String path, Duration interval, Duration timeout, int healthy, int unhealthy) {
  public static final HealthCheckConfig DEFAULTS =
      new HealthCheckConfig(true, "/healthz", Duration.ofSeconds(5), Duration.ofSeconds(1), 2, 3);

  /** The default, switched off: what an origin without {@code health_check:} gets. */
  public static final HealthCheckConfig OFF =
      new HealthCheckConfig(
          false,
          DEFAULTS.path,
          DEFAULTS.interval,
          DEFAULTS.timeout,
          DEFAULTS.healthy,
          DEFAULTS.unhealthy);
}
