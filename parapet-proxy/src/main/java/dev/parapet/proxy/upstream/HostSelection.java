package dev.parapet.proxy.upstream;

import dev.parapet.core.balance.LoadBalancer;
import dev.parapet.core.outlier.OutlierConfig;
import dev.parapet.proxy.config.OriginConfig;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How an origin pool chooses a host for an attempt (DESIGN.md's {@code origins.NAME.balancer},
 * {@code outlier}, {@code health_check} and {@code slow_start}).
 *
 * @param balancer {@code round_robin}, {@code least_request}, {@code ring_hash} or {@code ip_hash}
 * @param outlier passive ejection of failing hosts
 * @param healthCheck active health checks, or null when the origin has none
 * @param slowStart how long a returning host ramps up its share ({@link Duration#ZERO}: none)
 * @param weights each host's weight in the pool's host order; empty: every host weighs 1
 * @param hashKey what {@code ring_hash} hashes (path, a header or a cookie)
 */
public record HostSelection(
    String balancer,
    OutlierConfig outlier,
    @Nullable HealthCheck healthCheck,
    Duration slowStart,
    List<Integer> weights,
    OriginConfig.HashKey hashKey) {

  /** Hosts of weight 1, {@code ring_hash} on the path. */
  public HostSelection(
      String balancer,
      OutlierConfig outlier,
      @Nullable HealthCheck healthCheck,
      Duration slowStart) {
    this(balancer, outlier, healthCheck, slowStart, List.of(), OriginConfig.HashKey.PATH);
  }

  public HostSelection {
    weights = List.copyOf(weights);
    Objects.requireNonNull(hashKey, "hashKey");
    Objects.requireNonNull(balancer, "balancer");
    Objects.requireNonNull(outlier, "outlier");
    if (slowStart.isNegative()) {
      throw new IllegalArgumentException("slow_start : " + slowStart + " (expected: >= 0)");
    }
    // Fail here, with the configuration's words, rather than at the first request.
    switch (balancer) {
      case "round_robin", "least_request", "ring_hash", "ip_hash" -> {}
      default ->
          throw new IllegalArgumentException(
              "balancer : \""
                  + balancer
                  + "\" (expected: one of round_robin, least_request, ring_hash, ip_hash)");
    }
  }

  /**
   * DESIGN.md's defaults: least request, {@link OutlierConfig#defaults()}, no active health checks,
   * 30 s slow start.
   */
  public static HostSelection defaults() {
    return new HostSelection(
        "least_request", OutlierConfig.defaults(), null, Duration.ofSeconds(30));
  }

  /** The same with another balancer (see {@link LoadBalancer#of}). */
  public HostSelection withBalancer(String name) {
    return new HostSelection(name, outlier, healthCheck, slowStart, weights, hashKey);
  }

  /** The same with other outlier settings. */
  public HostSelection withOutlier(OutlierConfig config) {
    return new HostSelection(balancer, config, healthCheck, slowStart, weights, hashKey);
  }

  /** The same with active health checks ({@code null}: none). */
  public HostSelection withHealthCheck(@Nullable HealthCheck check) {
    return new HostSelection(balancer, outlier, check, slowStart, weights, hashKey);
  }

  /** The same with another slow-start window. */
  public HostSelection withSlowStart(Duration window) {
    return new HostSelection(balancer, outlier, healthCheck, window, weights, hashKey);
  }

  /** The same with host weights (host order) and a ring-hash key. */
  public HostSelection withWeights(List<Integer> hostWeights, OriginConfig.HashKey key) {
    return new HostSelection(balancer, outlier, healthCheck, slowStart, hostWeights, key);
  }

  /** The weight of the host at {@code index}: 1 unless configured. */
  public int weight(int index) {
    return index < weights.size() ? weights.get(index) : 1;
  }

  /**
   * Active health checks ({@code health_check:}): {@code GET path} on a fresh connection to each
   * host every {@code interval} (jittered); a 2xx within {@code timeout} passes.
   *
   * @param path the request target, starting with {@code /}
   * @param interval between two checks of one host, before jitter
   * @param timeout connect plus response head, at most
   * @param healthy consecutive passes that bring an unhealthy host back
   * @param unhealthy consecutive failures that take a healthy host out
   */
  public record HealthCheck(
      String path, Duration interval, Duration timeout, int healthy, int unhealthy) {
    public HealthCheck {
      if (!path.startsWith("/")) {
        throw new IllegalArgumentException("health_check.path : " + path + " (expected: /...)");
      }
      if (interval.isNegative() || interval.isZero()) {
        throw new IllegalArgumentException(
            "health_check.interval : " + interval + " (expected: > 0)");
      }
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException(
            "health_check.timeout : " + timeout + " (expected: > 0)");
      }
      if (healthy < 1 || unhealthy < 1) {
        throw new IllegalArgumentException(
            "health_check.healthy, unhealthy : "
                + healthy
                + ", "
                + unhealthy
                + " (expected: >= 1)");
      }
    }
  }
}
