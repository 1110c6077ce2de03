package dev.parapet.proxy.flow;

import dev.parapet.proxy.config.AdmissionConfig;
import dev.parapet.proxy.config.Cidr;
import dev.parapet.proxy.http1.HeaderList;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Listener-wide settings of the data plane: DESIGN.md's top-level keys and the limits on hostile
 * input.
 *
 * @param name this proxy's name in Proxy-Status, Via and logs
 * @param listen where clients connect
 * @param reserve time this hop keeps for itself out of every incoming deadline
 * @param minUseful below this remaining budget the origin is not tried (504 at once)
 * @param headerTimeout a client must finish sending a request head within this (slow clients)
 * @param idleTimeout a keep-alive client connection with no request for this long is closed
 * @param maxBodyBytes larger request bodies get 413
 * @param maxHeaderBytes the request head (line and fields) may be at most this large
 * @param maxHeaderFields at most this many header fields
 * @param maxRequestLine the request line may be at most this long
 * @param retryAfterMinSeconds lower bound of the jittered Retry-After when no better value is known
 * @param retryAfterMaxSeconds upper bound of it
 * @param admission the listener's concurrency limit, queue and priority header
 * @param trustedProxies peers whose internal signals (priority, deadline, forwarding headers,
 *     request id) are believed; every other peer's are removed or replaced
 */
public record ProxySettings(
    String name,
    InetSocketAddress listen,
    Duration reserve,
    Duration minUseful,
    Duration headerTimeout,
    Duration idleTimeout,
    long maxBodyBytes,
    int maxHeaderBytes,
    int maxHeaderFields,
    int maxRequestLine,
    long retryAfterMinSeconds,
    long retryAfterMaxSeconds,
    AdmissionConfig admission,
    List<Cidr> trustedProxies) {

  public ProxySettings {
    Objects.requireNonNull(name, "name");
    trustedProxies = List.copyOf(trustedProxies);
    Objects.requireNonNull(admission, "admission");
    Objects.requireNonNull(listen, "listen");
    if (maxRequestLine < 1
        || maxHeaderBytes < 1
        || maxRequestLine + maxHeaderBytes >= HeaderList.MAX_HEAD) {
      throw new IllegalArgumentException(
          "max request line + max header bytes : "
              + maxRequestLine
              + " + "
              + maxHeaderBytes
              + " (expected: each positive, together < "
              + HeaderList.MAX_HEAD
              + ": request heads are held with 16-bit offsets)");
    }
    if (retryAfterMinSeconds < 0 || retryAfterMaxSeconds < retryAfterMinSeconds) {
      throw new IllegalArgumentException(
          "retry_after : "
              + retryAfterMinSeconds
              + ".."
              + retryAfterMaxSeconds
              + " (expected: 0 <= min <= max)");
    }
  }

  /** DESIGN.md's defaults, listening on {@code listen}. */
  public static ProxySettings defaults(String name, InetSocketAddress listen) {
    return new ProxySettings(
        name,
        listen,
        Duration.ofMillis(50),
        Duration.ofMillis(20),
        Duration.ofSeconds(10),
        Duration.ofSeconds(60),
        64L * 1024 * 1024,
        32 * 1024,
        100,
        8 * 1024,
        1,
        5,
        AdmissionConfig.DEFAULTS,
        List.of());
  }

  /** The same settings with another request body limit. */
  public ProxySettings withMaxBodyBytes(long bytes) {
    return with(bytes, headerTimeout, admission);
  }

  /** The same settings with another header timeout. */
  public ProxySettings withHeaderTimeout(Duration timeout) {
    return with(maxBodyBytes, timeout, admission);
  }

  /** The same settings with another admission configuration. */
  public ProxySettings withAdmission(AdmissionConfig a) {
    return with(maxBodyBytes, headerTimeout, a);
  }

  /** The same settings trusting the internal signals of peers in {@code networks}. */
  public ProxySettings withTrustedProxies(List<Cidr> networks) {
    return new ProxySettings(
        name,
        listen,
        reserve,
        minUseful,
        headerTimeout,
        idleTimeout,
        maxBodyBytes,
        maxHeaderBytes,
        maxHeaderFields,
        maxRequestLine,
        retryAfterMinSeconds,
        retryAfterMaxSeconds,
        admission,
        networks);
  }

  private ProxySettings with(long bodyBytes, Duration headTimeout, AdmissionConfig a) {
    return new ProxySettings(
        name,
        listen,
        reserve,
        minUseful,
        headTimeout,
        idleTimeout,
        bodyBytes,
        maxHeaderBytes,
        maxHeaderFields,
        maxRequestLine,
        retryAfterMinSeconds,
        retryAfterMaxSeconds,
        a,
        trustedProxies);
  }
}
