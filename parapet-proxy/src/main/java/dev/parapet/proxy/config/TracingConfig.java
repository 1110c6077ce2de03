package dev.parapet.proxy.config;

import java.net.URI;
import org.jspecify.annotations.Nullable;

/**
 * {@code tracing:} OpenTelemetry spans of requests and origin attempts, exported over OTLP/HTTP.
 * Off unless {@code otlp_endpoint} is set.
 *
 * @param endpoint the collector's OTLP/HTTP traces URL ({@code http://127.0.0.1:4318/v1/traces}),
 *     or null: tracing off
 * @param sample share of new traces sampled (a trusted peer's sampled parent is always followed); 1
 *     %
 * @param serviceName {@code service.name} of the spans; the proxy's {@code name} when unset
 */
public record TracingConfig(@Nullable URI endpoint, double sample, @Nullable String serviceName) {
  public static final TracingConfig OFF = new TracingConfig(null, 0.01, null);

  public boolean enabled() {
    return endpoint != null;
  }
}
