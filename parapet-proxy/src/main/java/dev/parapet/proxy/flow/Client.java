package dev.parapet.proxy.flow;

import io.netty.channel.Channel;
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
  public static final Client UNKNOWN = new Client(null);

  private final @Nullable InetAddress address;
  private final @Nullable AsciiString ip;
  private final @Nullable String ipText;

  /** Whether the peer's internal signals are believed, under {@link #trustedFor}. */
  private boolean trusted;

  private @Nullable TrustedPeers trustedFor;

  private Client(@Nullable InetAddress address) {
    this.address = address;
    this.ipText = address == null ? null : address.getHostAddress();
    this.ip = ipText == null ? null : AsciiString.cached(ipText);
  }

  /** The peer of {@code channel}. */
  public static Client of(Channel channel) {
    return channel.remoteAddress() instanceof InetSocketAddress remote
        ? new Client(remote.getAddress())
        : UNKNOWN;
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
