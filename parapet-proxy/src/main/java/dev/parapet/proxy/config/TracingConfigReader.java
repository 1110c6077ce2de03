package dev.parapet.proxy.config;

import dev.parapet.proxy.config.MappingReader.ShareRange;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Set;

/**
 * Reads the {@code tracing:} block ({@code otlp_endpoint}, {@code sample}, {@code service_name}).
 */
final class TracingConfigReader {
  static final Set<String> KEYS = MappingReader.keys("otlp_endpoint", "sample", "service_name");

  private TracingConfigReader() {}

  static TracingConfig read(MappingReader r) {
    TracingConfig d = TracingConfig.OFF;
    double sample = r.percent("sample", d.sample(), ShareRange.ANY);
    String service = r.has("service_name") ? r.string("service_name", "") : null;
    if (service != null && !r.failed("service_name") && service.isBlank()) {
      r.error("service_name", "must not be empty");
    }
    URI endpoint = null;
    if (r.has("otlp_endpoint")) {
      String text = r.string("otlp_endpoint", "");
      if (!r.failed("otlp_endpoint")) {
        try {
          URI u = new URI(text);
          if (("http".equals(u.getScheme()) || "https".equals(u.getScheme()))
              && u.getHost() != null) {
            endpoint = u;
          } else {
            r.error(
                "otlp_endpoint",
                "must be an http(s) URL like http://127.0.0.1:4318/v1/traces, was '" + text + "'");
          }
        } catch (URISyntaxException e) {
          r.error(
              "otlp_endpoint",
              "must be an http(s) URL like http://127.0.0.1:4318/v1/traces, was '" + text + "'");
        }
      }
    } else if (r.has("sample") || r.has("service_name")) {
      r.warning("otlp_endpoint", "not set: tracing stays off");
    }
    return new TracingConfig(endpoint, sample, service);
  }
}
