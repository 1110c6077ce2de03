package dev.parapet.proxy.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One proxy's whole configuration, as DESIGN.md's YAML describes it. Immutable and already
 * validated: {@link ConfigLoader} builds it only when the file has no errors, so every reference (a
 * route's origin, an origin's fallback) resolves.
 *
 * @param name this proxy's name in {@code Proxy-Status}, {@code Cache-Status}, {@code Via}, logs
 * @param listen where the data-plane listener binds
 * @param trustedProxies the peers (other tiers) whose internal signals are believed: priority,
 *     deadline, forwarding headers, request id; from every other peer they are removed or replaced
 * @param origins the origin pools by name, in file order
 * @param routes in file order
 * @param accessLog the access log file, or null
 * @param tracing OpenTelemetry export; {@link TracingConfig#OFF} by default
 * @param tls the HTTPS listener, or null when there is none
 * @param http2 limits of HTTP/2 client connections
 * @param drainTimeout how long a stop (SIGTERM) waits for requests in flight before it closes
 */
public record ProxyConfig(
    String name,
    HostPort listen,
    List<Cidr> trustedProxies,
    AdminConfig admin,
    DeadlineConfig deadline,
    AdmissionConfig admission,
    OverloadConfig overload,
    CacheConfig cache,
    Map<String, OriginConfig> origins,
    List<RouteConfig> routes,
    @Nullable Path accessLog,
    TracingConfig tracing,
    @Nullable TlsConfig tls,
    Http2Config http2,
    Duration drainTimeout) {

  /** DESIGN.md's default name. */
  public static final String DEFAULT_NAME = "parapet";

  /** DESIGN.md's default listen address. */
  public static final HostPort DEFAULT_LISTEN = new HostPort("127.0.0.1", 8080);

  /** How long a stop waits for requests in flight, by default. */
  public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(10);

  public ProxyConfig {
    trustedProxies = List.copyOf(trustedProxies);
    origins = Collections.unmodifiableMap(new LinkedHashMap<>(origins));
    routes = List.copyOf(routes);
  }

  /**
   * The origin pool called {@code name}.
   *
   * @throws IllegalArgumentException if there is none
   */
  public OriginConfig origin(String name) {
    OriginConfig o = origins.get(name);
    if (o == null) {
      throw new IllegalArgumentException(
          "origin : " + name + " (expected: one of " + origins.keySet() + ")");
    }
    return o;
  }
}
