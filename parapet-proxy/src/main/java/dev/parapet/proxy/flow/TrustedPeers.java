package dev.parapet.proxy.flow;

import dev.parapet.proxy.config.Cidr;
import java.net.InetAddress;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The peers whose internal signals Parapet believes: the networks of {@code trusted_proxies} (other
 * tiers of ours). A request from any other peer has those signals removed before anything reads
 * them ({@link dev.parapet.proxy.http.ForwardedHeaders#stripInternalSignals}): its priority header,
 * its deadline, its forwarding headers and its request id. Nobody is trusted by default.
 */
final class TrustedPeers {
  private final Cidr[] networks;

  TrustedPeers(List<Cidr> networks) {
    this.networks = networks.toArray(new Cidr[0]);
  }

  /** Whether {@code peer}'s internal signals are believed; never for an unknown peer. */
  boolean trusts(@Nullable InetAddress peer) {
    if (peer == null) {
      return false;
    }
    for (Cidr c : networks) {
      if (c.contains(peer)) {
        return true;
      }
    }
    return false;
  }
}
