package dev.parapet.proxy.config;

import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The admin listener ({@code admin:}).
 *
 * @param listen where the admin API binds; default {@code 127.0.0.1:9901}
 * @param tokenFile file holding the bearer token for changes (and for reads off loopback or with
 *     {@code read_token: required}), resolved against the configuration file's directory; null
 *     means no token, which the loader refuses off loopback and with {@code read_token: required}
 * @param hosts names (or IP addresses) requests may carry in {@code Host} besides {@code
 *     localhost}, 127.0.0.1, ::1 and the listen address; lower case, without brackets
 * @param readToken whether reads need the token on a loopback listener too
 */
public record AdminConfig(
    HostPort listen, @Nullable Path tokenFile, List<String> hosts, ReadToken readToken) {
  public static final AdminConfig DEFAULTS =
      new AdminConfig(new HostPort("127.0.0.1", 9901), null, List.of(), ReadToken.OPTIONAL);

  public AdminConfig {
    hosts = List.copyOf(hosts);
  }

  /** {@code admin.read_token}. */
  public enum ReadToken {
    /**
     * Reads need no token on a loopback listener (off loopback they always do), changes always do.
     */
    OPTIONAL,
    /** Every request but {@code /healthz} and {@code /readyz} needs the token. */
    REQUIRED
  }
}
