package dev.parapet.proxy.config;

import java.net.URI;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * {@code origins.NAME.fleet_limit:} a ceiling on the attempts every proxy of a fleet together sends
 * to the origin, kept in one Redis key; each proxy falls back to {@code rate / instances} while
 * Redis is slow or down.
 *
 * @param ratePerSecond the ceiling, attempts per second for the whole fleet ({@code 5000/s})
 * @param burst attempts the shared bucket lets through at once; a tenth of a second of the rate
 * @param redis where the shared bucket lives ({@code redis://host:port[/db]})
 * @param key the Redis key of the bucket; proxies that share it share the ceiling
 * @param instances how many proxies share the key (each one's fallback share); 1
 * @param lease tokens taken from Redis at once, or null for about 20 ms of this proxy's share
 * @param timeout how long a lease may take before this proxy falls back to its local share; 5 ms
 */
public record FleetLimitConfig(
    double ratePerSecond,
    int burst,
    URI redis,
    String key,
    int instances,
    @Nullable Integer lease,
    Duration timeout) {

  public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(5);

  /** The default burst for a rate: a tenth of a second of it, at least one. */
  public static int defaultBurst(double ratePerSecond) {
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.ceil(ratePerSecond / 10)));
  }
}
