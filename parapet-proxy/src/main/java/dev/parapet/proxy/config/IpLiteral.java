package dev.parapet.proxy.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * IP address literals, parsed without any name lookup: validating a configuration must never wait
 * on DNS. IPv4 is strict dotted quad; IPv6 is handed to the JDK in brackets, which makes it parse a
 * literal or fail, never resolve.
 */
final class IpLiteral {
  private static final Pattern IPV4 =
      Pattern.compile(
          "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
  private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:.]{2,45}");

  private IpLiteral() {}

  static boolean isIpv4(String s) {
    return IPV4.matcher(s).matches();
  }

  /** The address bytes (4 or 16), or null when {@code s} is not an IP literal. */
  static byte @Nullable [] parse(String s) {
    if (isIpv4(s)) {
      String[] parts = s.split("\\.", -1);
      byte[] out = new byte[4];
      for (int i = 0; i < 4; i++) {
        out[i] = (byte) Integer.parseInt(parts[i]);
      }
      return out;
    }
    if (s.indexOf(':') < 0 || !IPV6_CHARS.matcher(s).matches()) {
      return null;
    }
    try {
      byte[] a = InetAddress.getByName("[" + s + "]").getAddress();
      if (a.length == 4) {
        // An IPv4-mapped literal (::ffff:1.2.3.4) comes back as IPv4; keep the family written.
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        System.arraycopy(a, 0, mapped, 12, 4);
        return mapped;
      }
      return a;
    } catch (UnknownHostException e) {
      return null;
    }
  }
}
