package dev.parapet.proxy.flow;

import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AsciiString;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;

/**
 * Who sent a request, as the request path uses it: the peer's address for the per-client limit and
 * whether its internal signals are believed ({@link TrustedPeers}), as text for the access log and
 * {@code ip_hash}, as bytes for {@code X-Forwarded-For} (an AsciiString is written with one copy).
 * Made once per client connection; every request on it (every stream, on HTTP/2) shares it.
 * Confined to the connection's event loop.
 */
public final class Client {
  /** A sender whose address is unknown (an in-process channel; a background refresh). */
  public static final Client UNKNOWN = new Client(null, false);

  private static final Client UNKNOWN_SECURE = new Client(null, true);

  /** A sender whose address is unknown, over https when {@code secure}. */
  public static Client unknown(boolean secure) {
    return secure ? UNKNOWN_SECURE : UNKNOWN;
  }

  private final @Nullable InetAddress address;
  private final @Nullable AsciiString ip;
  private final @Nullable String ipText;
  private final boolean secure;

  /** Whether the peer's internal signals are believed, under {@link #trustedFor}. */
  private boolean trusted;

  private @Nullable TrustedPeers trustedFor;

  private Client(@Nullable InetAddress address, boolean secure) {
    this.address = address;
    this.secure = secure;
    this.ipText = address == null ? null : address.getHostAddress();
    this.ip = ipText == null ? null : AsciiString.cached(ipText);
  }

  /**
   * The peer of {@code channel}; secure when the connection (or, for an HTTP/2 stream, its parent
   * connection) has TLS in its pipeline.
   */
  public static Client of(Channel channel) {
    Channel parent = channel.parent();
    boolean secure =
        channel.pipeline().get(SslHandler.class) != null
            || (parent != null && parent.pipeline().get(SslHandler.class) != null);
    return channel.remoteAddress() instanceof InetSocketAddress remote
        ? new Client(remote.getAddress(), secure)
        : unknown(secure);
  }

  /** Whether the request came over TLS: {@code X-Forwarded-Proto: https} and the cache key. */
  public boolean secure() {
    return secure;
  }

  @Nullable InetAddress address() {
    return address;
  }

  /** The address as text ({@code 127.0.0.1}), or null when unknown. */
  @Nullable String ip() {
    return ipText;
  }

  /** The address as bytes for {@code X-Forwarded-For}, or null when unknown. */
  @Nullable AsciiString ipValue() {
    return ip;
  }

  /** Whether this peer's internal signals are believed (decided once per configuration). */
  boolean trustedBy(TrustedPeers peers) {
    if (trustedFor != peers) {
      trusted = peers.trusts(address);
      trustedFor = peers;
    }
    return trusted;
  }
}
