package dev.parapet.proxy.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * An IPv4 or IPv6 network such as {@code 10.0.0.0/8} or {@code fd00::/8}; a bare address means that
 * one address ({@code /32} or {@code /128}). Host bits must be zero: {@code 10.0.0.1/8} is refused
 * with the network it probably meant, since a trust list is the wrong place to guess.
 */
public record Cidr(InetAddress network, int prefixLength) {

  public Cidr {
    int max = network.getAddress().length * 8;
    if (prefixLength < 0 || prefixLength > max) {
      throw new IllegalArgumentException(
          "prefixLength : " + prefixLength + " (expected: in [0, " + max + "])");
    }
  }

  /**
   * Parses {@code text} without any name lookup.
   *
   * @throws IllegalArgumentException "must be a CIDR like 10.0.0.0/8 or fd00::/8, was '...'"
   */
  public static Cidr parse(String text) {
    String s = text.trim();
    int slash = s.indexOf('/');
    String address = slash < 0 ? s : s.substring(0, slash);
    byte[] bytes = IpLiteral.parse(address);
    if (bytes == null) {
      throw new IllegalArgumentException(
          "must be a CIDR like 10.0.0.0/8 or fd00::/8, was '" + text + "'");
    }
    int max = bytes.length * 8;
    int prefix = max;
    if (slash >= 0) {
      String p = s.substring(slash + 1);
      try {
        prefix = Integer.parseInt(p);
      } catch (NumberFormatException e) {
        prefix = -1;
      }
      if (prefix < 0 || prefix > max || !p.chars().allMatch(Character::isDigit)) {
        throw new IllegalArgumentException(
            "must have a prefix length in [0, " + max + "], was '" + text + "'");
      }
    }
    byte[] masked = mask(bytes, prefix);
    InetAddress network = toAddress(masked);
    if (!Arrays.equals(masked, bytes)) {
      throw new IllegalArgumentException(
          "must have zero host bits, was '"
              + text
              + "' (did you mean "
              + network.getHostAddress()
              + "/"
              + prefix
              + "?)");
    }
    return new Cidr(network, prefix);
  }

  /** True when {@code address} is inside this network (same address family). */
  public boolean contains(InetAddress address) {
    byte[] a = address.getAddress();
    if (a.length != network.getAddress().length) {
      return false;
    }
    return Arrays.equals(mask(a, prefixLength), network.getAddress());
  }

  private static byte[] mask(byte[] address, int prefix) {
    byte[] out = address.clone();
    for (int i = 0; i < out.length; i++) {
      int bitsHere = Math.max(0, Math.min(8, prefix - i * 8));
      out[i] = (byte) (out[i] & (0xff << (8 - bitsHere)));
    }
    return out;
  }

  private static InetAddress toAddress(byte[] bytes) {
    try {
      return InetAddress.getByAddress(bytes);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("address : " + Arrays.toString(bytes), e);
    }
  }

  @Override
  public String toString() {
    return network.getHostAddress() + "/" + prefixLength;
  }
}
