package dev.parapet.proxy.admin;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Who may use the admin API ({@code admin:} in configuration); {@link AdminGate} enforces it.
 *
 * @param token the bearer token, or null: then every change is refused, and the listener must be on
 *     loopback
 * @param hosts names (or IP addresses) a request's {@code Host} may carry besides the defaults
 *     ({@code localhost}, {@code 127.0.0.1}, {@code ::1} and the listen address): the names an
 *     operator reaches the listener by, such as {@code admin.internal}; without port or brackets
 * @param tokenForReads true ({@code admin.read_token: required}): reads need the token too, except
 *     {@code /healthz} and {@code /readyz}; off loopback they need it whatever this says
 */
public record AdminAccess(@Nullable String token, List<String> hosts, boolean tokenForReads) {
  public AdminAccess {
    hosts = List.copyOf(hosts);
  }

  /** The defaults with {@code token}: no further names, reads on loopback need no token. */
  public static AdminAccess withToken(@Nullable String token) {
    return new AdminAccess(token, List.of(), false);
  }
}
