package dev.parapet.proxy.config;

import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * The admin listener ({@code admin:}).
 *
 * @param listen where the admin API binds; default {@code 127.0.0.1:9901}
 * @param tokenFile file holding the bearer token for changes (and for everything when the listener
 *     is off loopback), resolved against the configuration file's directory; null means no token,
 *     which the loader refuses off loopback
 */
public record AdminConfig(HostPort listen, @Nullable Path tokenFile) {
  public static final AdminConfig DEFAULTS = new AdminConfig(new HostPort("127.0.0.1", 9901), null);
}
