package dev.parapet.proxy.config;

import java.time.Duration;

/**
 * Passive outlier detection per host ({@code outlier:}).
 *
 * @param consecutive5xx eject after this many 5xx in a row; 5
 * @param failurePercentage or when this share of a host's requests fail in an interval; 50 %
 * @param minRequests ... over at least this many requests; 200
 * @param interval evaluation interval; 10 s
 * @param baseEjection ejection time, multiplied by the host's ejection count; 30 s
 * @param maxEjection ejection time cap; 300 s
 * @param maxEjected never eject more than this share of the pool's hosts; 50 %
 */
public record OutlierConfig(
    int consecutive5xx,
    double failurePercentage,
    int minRequests,
    Duration interval,
    Duration baseEjection,
    Duration maxEjection,
    double maxEjected) {
  public static final OutlierConfig DEFAULTS =
      new OutlierConfig(
          5,
          0.50,
          200,
          Duration.ofSeconds(10),
          Duration.ofSeconds(30),
          Duration.ofSeconds(300),
          0.50);
}
