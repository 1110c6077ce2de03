package dev.parapet.proxy.cache;

import dev.parapet.proxy.http.ProxyError;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Why the origin could not give a fresh answer: the triggers of RFC 5861 {@code stale-if-error}
 * (500, 502, 503, 504) and the seed's edge extension (timeouts, connect errors, and the proxy's own
 * local refusals: open breaker, shed, pool limit). {@link #detail()} is the token used in {@code
 * Cache-Status; detail="stale ..."}.
 */
public enum StaleTrigger {
  /** The origin answered 500, 502, 503 or 504. */
  ORIGIN_5XX("origin-5xx", "5xx", true),
  /** The attempt ran out of time. */
  TIMEOUT("timeout", "timeout", false),
  /** Connecting failed (refused, reset, connect timeout, TLS) or the connection broke. */
  CONNECT_ERROR("connect-error", "connect_error", false),
  /** The breaker for this scope refused the request. */
  BREAKER_OPEN("breaker-open", "breaker_open", false),
  /**
   * Admission control or the overload manager shed the request, or the origin's fleet-wide ceiling
   * had no token for it.
   */
  SHED("shed", "shed", false),
  /** The origin pool's connection or request limits are reached. */
  POOL_LIMIT("pool-limit", "pool_limit", false),
  /**
   * An incident is declared ({@code POST /admin/incident}: "prefer stale"): a stale copy within its
   * stale-if-error window is served at once and refreshed in the background, sparing the origin.
   */
  INCIDENT("incident", "incident", false);

  /**
   * The triggers {@code cache.stale_if_error} covers unless configured otherwise: the origin could
   * not be asked or did not answer (RFC 9111 §4.2.4 lets a cache serve stale when "disconnected").
   * An origin's own 5xx is an answer: stale for it needs the response's {@code stale-if-error} or
   * {@code 5xx} in {@code cache.stale_if_error_on}.
   */
  public static final Set<StaleTrigger> UNREACHABLE =
      Collections.unmodifiableSet(
          EnumSet.of(TIMEOUT, CONNECT_ERROR, BREAKER_OPEN, SHED, POOL_LIMIT));

  private final String detail;
  private final String configName;
  private final boolean originAnswered;

  StaleTrigger(String detail, String configName, boolean originAnswered) {
    this.detail = detail;
    this.configName = configName;
    this.originAnswered = originAnswered;
  }

  /** The name in {@code cache.stale_if_error_on}. */
  public String configName() {
    return configName;
  }

  /** The trigger named {@code name} in configuration, or null. */
  public static @Nullable StaleTrigger ofConfigName(String name) {
    for (StaleTrigger t : values()) {
      if (t != INCIDENT && t.configName.equals(name)) {
        return t;
      }
    }
    return null;
  }

  /** Token for {@code Cache-Status} {@code detail} and logs. */
  public String detail() {
    return detail;
  }

  /** True when the origin sent a response (which can be forwarded instead of a stale one). */
  public boolean originAnswered() {
    return originAnswered;
  }

  /**
   * The trigger of a local error, or null when the error says nothing about the origin's
   * availability (a malformed request, no route).
   */
  public static @Nullable StaleTrigger of(ProxyError error) {
    return switch (error) {
      case BREAKER_OPEN -> BREAKER_OPEN;
      case CONNECTION_LIMIT -> POOL_LIMIT;
      case SHED, FLEET_LIMIT -> SHED;
      case CONNECT_TIMEOUT, CONNECTION_REFUSED, CONNECTION_TERMINATED, MALFORMED_RESPONSE ->
          CONNECT_ERROR;
      case RESPONSE_TIMEOUT, DEADLINE_TOO_SHORT -> TIMEOUT;
      default -> null;
    };
  }

  /** The trigger for an origin status, or null when that status is not an error RFC 5861 names. */
  public static @Nullable StaleTrigger forStatus(int status) {
    return switch (status) {
      case 500, 502, 503, 504 -> ORIGIN_5XX;
      default -> null;
    };
  }
}
