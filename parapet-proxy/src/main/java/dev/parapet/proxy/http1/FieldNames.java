package dev.parapet.proxy.http1;

import static dev.parapet.proxy.http1.ByteScan.sameBytes;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValidationUtil;
import io.netty.util.AsciiString;
import java.util.Arrays;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Header names as constants, checked to be tokens once rather than per message. A received name
 * that is a common one ({@link #COMMON_NAMES}, in either of the two spellings they come in) is that
 * constant, found with a compare or two; any other is a view of its bytes checked here. A name set
 * through {@link HeaderList}'s {@code HttpHeaders} methods is checked too, unless it is one of the
 * proxy's own constants ({@link #token}), recognized by identity. A name's {@link #key} and {@link
 * #bit} are what {@link HeaderList}'s lookups compare before the name itself.
 */
final class FieldNames {
  /** Header names seen in most requests and responses. */
  private static final String[] COMMON_NAMES = {
    "Accept",
    "Accept-Encoding",
    "Accept-Language",
    "Accept-Ranges",
    "Age",
    "Authorization",
    "Cache-Control",
    "Connection",
    "Content-Encoding",
    "Content-Length",
    "Content-Type",
    "Cookie",
    "Date",
    "ETag",
    "Expires",
    "Host",
    "If-Modified-Since",
    "If-None-Match",
    "Keep-Alive",
    "Last-Modified",
    "Location",
    "Origin",
    "Referer",
    "Retry-After",
    "Server",
    "Set-Cookie",
    "Transfer-Encoding",
    "User-Agent",
    "Vary",
    "Via",
    "Proxy-Status",
    "Content-Range",
    "Content-Language",
    "Content-Disposition",
    "Access-Control-Allow-Origin",
    "Strict-Transport-Security",
    "X-Content-Type-Options",
    "X-Forwarded-For",
    "X-Forwarded-Proto",
    "X-Frame-Options",
    "Link",
    "Parapet-Deadline",
  };

  /**
   * {@link #COMMON_NAMES} and their lowercase forms by length, then by first byte (mostly one
   * candidate each): a name is looked up with a compare or two, not a scan.
   */
  private static final AsciiString[][][] NAMES = names();

  /**
   * Names already checked: the fields a proxy sets on every message (Via, the forwarding fields,
   * the deadline, framing), compared by identity so that each set does not check its constant name
   * again (that check was a few percent of the event loop's own time). Copy on write; only {@link
   * #token} adds to it, a handful of times per process.
   */
  private static volatile AsciiString[] tokens = {
    HttpHeaderNames.VIA,
    HttpHeaderNames.TRANSFER_ENCODING,
    HttpHeaderNames.CONNECTION,
    HttpHeaderNames.CONTENT_LENGTH,
  };

  private FieldNames() {}

  private static AsciiString[][][] names() {
    int longest = 0;
    for (String n : COMMON_NAMES) {
      longest = Math.max(longest, n.length());
    }
    AsciiString[][][] out = new AsciiString[longest + 1][128][];
    for (String name : COMMON_NAMES) {
      for (String n : new String[] {name, name.toLowerCase(Locale.ROOT)}) {
        AsciiString[] before = out[n.length()][n.charAt(0)];
        AsciiString[] after =
            before == null ? new AsciiString[1] : Arrays.copyOf(before, before.length + 1);
        after[after.length - 1] = AsciiString.cached(n);
        out[n.length()][n.charAt(0)] = after;
      }
    }
    return out;
  }

  /**
   * The received name in {@code b[start, start + length)}: its constant if it is a common one, else
   * a view of its bytes, checked to be a token.
   *
   * @throws Http1Decoder.ProblemException if it is not a token
   */
  static AsciiString received(byte[] b, int start, int length) {
    AsciiString known = known(b, start, length);
    if (known != null) {
      return known; // a token: COMMON_NAMES are
    }
    AsciiString name = new AsciiString(b, start, length, false);
    if (length == 0 || HttpHeaderValidationUtil.validateToken(name) >= 0) {
      throw new Http1Decoder.ProblemException("a header name with an invalid character: " + name);
    }
    return name;
  }

  /** The common name spelled as {@code b[start, start + length)}, or null. */
  static @Nullable AsciiString known(byte[] b, int start, int length) {
    if (length <= 0 || length >= NAMES.length || b[start] < 0) {
      return null;
    }
    AsciiString[] candidates = NAMES[length][b[start]];
    if (candidates != null) {
      for (AsciiString n : candidates) {
        if (sameBytes(b, start, length, n.array(), n.arrayOffset())) {
          return n;
        }
      }
    }
    return null;
  }

  /**
   * A header name for constants: checked to be a token once, here, and recognized by identity
   * afterwards, so that setting it does not check it again.
   *
   * @throws IllegalArgumentException if {@code name} is not a token
   */
  static AsciiString token(String name) {
    AsciiString t = AsciiString.cached(name);
    checked(t);
    synchronized (FieldNames.class) {
      AsciiString[] all = tokens;
      AsciiString[] more = Arrays.copyOf(all, all.length + 1);
      more[all.length] = t;
      tokens = more;
    }
    return t;
  }

  /**
   * {@code name}, if it is a token.
   *
   * @throws IllegalArgumentException if it is not
   */
  static CharSequence checked(CharSequence name) {
    for (AsciiString t : tokens) {
      if (t == name) {
        return name;
      }
    }
    if (name.length() == 0 || HttpHeaderValidationUtil.validateToken(name) >= 0) {
      throw new IllegalArgumentException("a header name with an invalid character: " + name);
    }
    return name;
  }

  /** A name's length and lowercase first character: equal for names equal ignoring case. */
  static int key(CharSequence name) {
    int n = name.length();
    if (n == 0) {
      return 0;
    }
    // Names are mostly AsciiString constants and views: read the byte, not a char through the
    // interface.
    int c = name instanceof AsciiString a ? a.byteAt(0) & 0xFF : name.charAt(0);
    if (c >= 'A' && c <= 'Z') {
      c += 'a' - 'A'; // names are tokens: ASCII case folding is all there is
    }
    return (n << 8) | (c & 0xFF);
  }

  /**
   * The bit of a {@link HeaderList}'s presence mask for a name whose {@link #key} is {@code k}: one
   * of 64, so that a lookup of an absent name mostly ends without a scan.
   */
  static long bit(int k) {
    return 1L << ((k * 0x9E3779B9) >>> 26); // the key's top six bits after a Fibonacci hash
  }
}
