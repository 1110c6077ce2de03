package dev.parapet.proxy.config;

import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * {@code origins.NAME.tls}: the pool's connections are HTTPS.
 *
 * @param sni the server name sent and verified; null: each host's own name from {@code hosts}
 * @param verify whether the origin's certificate chain and name are checked (on by default)
 * @param caFile PEM certificates trusted instead of the system's trust store; null: the system's
 * @param certFile a client certificate chain presented to the origin, or null
 * @param keyFile the client certificate's key; set exactly when {@code certFile} is
 */
public record OriginTlsConfig(
    @Nullable String sni,
    boolean verify,
    @Nullable Path caFile,
    @Nullable Path certFile,
    @Nullable Path keyFile) {

  /** {@code tls: on}: system trust, verification on, the hosts' names. */
  public static final OriginTlsConfig DEFAULTS = new OriginTlsConfig(null, true, null, null, null);
}
