package dev.parapet.core.outlier;

import dev.parapet.core.time.Durations;
import java.time.Duration;

/**
 * Outlier detection settings for one origin pool; the YAML block {@code outlier:} of an origin.
 *
 * @param consecutive5xx eject after this many 5xx (or connect failures) in a row; 0 disables
 * @param consecutiveGatewayFailures eject after this many 502/503/504 or connect failures in a row;
 *     0 disables (the default, as Envoy's {@code enforcing_consecutive_gateway_failure} is 0)
 * @param failurePercentage eject a host whose failure fraction in one interval is at least this, in
 *     {@code (0, 1]}
 * @param minRequests the failure-percentage rule applies only to hosts with at least this many
 *     requests in the interval
 * @param intervalNanos length of one evaluation interval
 * @param baseEjectionNanos ejection time per ejection multiplier step
 * @param maxEjectionNanos cap on one ejection's duration
 * @param maxEjectedFraction never eject more than this fraction of the pool's hosts, in {@code [0,
 *     1]}
 */
public record OutlierConfig(
    int consecutive5xx,
    int consecutiveGatewayFailures,
    double failurePercentage,
    int minRequests,
    long intervalNanos,
    long baseEjectionNanos,
    long maxEjectionNanos,
    double maxEjectedFraction) {

  public OutlierConfig {
    if (consecutive5xx < 0) {
      throw new IllegalArgumentException(
          "consecutive_5xx : " + consecutive5xx + " (expected: >= 0)");
    }
    if (consecutiveGatewayFailures < 0) {
      throw new IllegalArgumentException(
          "consecutive_gateway_failures : " + consecutiveGatewayFailures + " (expected: >= 0)");
    }
    if (!(failurePercentage > 0.0 && failurePercentage <= 1.0)) {
      throw new IllegalArgumentException(
          "failure_percentage : " + failurePercentage + " (expected: in (0, 1])");
    }
    if (minRequests < 1) {
      throw new IllegalArgumentException("min_requests : " + minRequests + " (expected: >= 1)");
    }
    if (intervalNanos <= 0) {
      throw new IllegalArgumentException("interval : " + intervalNanos + "ns (expected: > 0)");
    }
    if (baseEjectionNanos <= 0) {
      throw new IllegalArgumentException(
          "base_ejection : " + baseEjectionNanos + "ns (expected: > 0)");
    }
    if (maxEjectionNanos < baseEjectionNanos) {
      throw new IllegalArgumentException(
          "max_ejection : "
              + maxEjectionNanos
              + "ns (expected: >= base_ejection "
              + baseEjectionNanos
              + "ns)");
    }
    if (!(maxEjectedFraction >= 0.0 && maxEjectedFraction <= 1.0)) {
      throw new IllegalArgumentException(
          "max_ejected : " + maxEjectedFraction + " (expected: in [0, 1])");
    }
  }

  /**
   * DESIGN.md defaults: {@code {consecutive_5xx: 5, failure_percentage: 50%, min_requests: 200,
   * interval: 10s, base_ejection: 30s, max_ejection: 300s, max_ejected: 50%}}, gateway rule off.
   */
  public static OutlierConfig defaults() {
    return new OutlierConfig(
        5,
        0,
        0.5,
        200,
        Duration.ofSeconds(10).toNanos(),
        Duration.ofSeconds(30).toNanos(),
        Duration.ofSeconds(300).toNanos(),
        0.5);
  }

  public OutlierConfig withConsecutive5xx(int count) {
    return new OutlierConfig(
        count,
        consecutiveGatewayFailures,
        failurePercentage,
        minRequests,
        intervalNanos,
        baseEjectionNanos,
        maxEjectionNanos,
        maxEjectedFraction);
  }

  public OutlierConfig withConsecutiveGatewayFailures(int count) {
    return new OutlierConfig(
        consecutive5xx,
        count,
        failurePercentage,
        minRequests,
        intervalNanos,
        baseEjectionNanos,
        maxEjectionNanos,
        maxEjectedFraction);
  }

  public OutlierConfig withFailurePercentage(double fraction, int minRequests) {
    return new OutlierConfig(
        consecutive5xx,
        consecutiveGatewayFailures,
        fraction,
        minRequests,
        intervalNanos,
        baseEjectionNanos,
        maxEjectionNanos,
        maxEjectedFraction);
  }

  public OutlierConfig withInterval(Duration interval) {
    return new OutlierConfig(
        consecutive5xx,
        consecutiveGatewayFailures,
        failurePercentage,
        minRequests,
        Durations.positiveNanos("interval", interval),
        baseEjectionNanos,
        maxEjectionNanos,
        maxEjectedFraction);
  }

  public OutlierConfig withEjection(Duration base, Duration max) {
    return new OutlierConfig(
        consecutive5xx,
        consecutiveGatewayFailures,
        failurePercentage,
        minRequests,
        intervalNanos,
        Durations.positiveNanos("base_ejection", base),
        Durations.positiveNanos("max_ejection", max),
        maxEjectedFraction);
  }

  public OutlierConfig withMaxEjectedFraction(double fraction) {
    return new OutlierConfig(
        consecutive5xx,
        consecutiveGatewayFailures,
        failurePercentage,
        minRequests,
        intervalNanos,
        baseEjectionNanos,
        maxEjectionNanos,
        fraction);
  }
}
