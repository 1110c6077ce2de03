package dev.parapet.proxy.upstream;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP/1.1 codec of an origin connection: Netty's request encoder and response decoder paired
 * as {@link HttpClientCodec} pairs them (each response matched to its request's method, so the
 * response to a HEAD is known to have no body), except that the response's common header names, its
 * version, status code and reason phrase come from constants instead of being copied out of every
 * response's bytes.
 *
 * <p>Why not {@code HttpClientCodec} itself: its decoder copies every header name into a new {@code
 * AsciiString} (and hashes it again) and the status line into three new strings. An origin answers
 * with much the same status line and names every time; at tens of thousands of responses a second
 * those copies were about a fifth of the bytes the proxy allocated per request. Netty's request
 * decoder already does the same for common request names. Names are matched byte for byte, so the
 * case the origin sent is what the client receives.
 */
public final class OriginCodec
    extends CombinedChannelDuplexHandler<OriginCodec.ResponseDecoder, OriginCodec.RequestEncoder> {

  /** Response header names seen from most origins, in the two spellings they come in. */
  private static final String[] COMMON_NAMES = {
    "Accept-Ranges",
    "Age",
    "Cache-Control",
    "Connection",
    "Content-Encoding",
    "Content-Length",
    "Content-Type",
    "Date",
    "ETag",
    "Expires",
    "Keep-Alive",
    "Last-Modified",
    "Location",
    "Retry-After",
    "Server",
    "Set-Cookie",
    "Transfer-Encoding",
    "Vary",
    "Via",
    "Proxy-Status",
    "Content-Range",
    "Content-Language",
    "Content-Disposition",
    "Access-Control-Allow-Origin",
    "Strict-Transport-Security",
    "X-Content-Type-Options",
    "X-Frame-Options",
    "Link",
  };

  /**
   * {@link #COMMON_NAMES} and their lowercase forms by length, then by first byte (mostly one
   * candidate each): a name is looked up with a compare or two, not a scan.
   */
  private static final AsciiString[][][] NAMES = names();

  private static final String HTTP_1_1 = "HTTP/1.1";
  private static final byte[] HTTP_1_1_BYTES = HTTP_1_1.getBytes(StandardCharsets.US_ASCII);

  /** Status codes 100-599 as strings. */
  private static final String[] CODES = new String[600];

  /** Their standard reason phrases, as strings and as bytes (null where Netty knows none). */
  private static final @Nullable String[] REASONS = new String[600];

  private static final byte[][] REASON_BYTES = new byte[600][];

  static {
    for (int i = 100; i < CODES.length; i++) {
      CODES[i] = Integer.toString(i);
      HttpResponseStatus known = HttpResponseStatus.valueOf(i);
      if (known == HttpResponseStatus.valueOf(i)) { // a constant, not made up for this code
        REASONS[i] = known.reasonPhrase();
        REASON_BYTES[i] = known.reasonPhrase().getBytes(StandardCharsets.US_ASCII);
      }
    }
  }

  /**
   * @param maxInitialLineLength the longest status line accepted
   * @param maxHeaderSize the largest response header section accepted
   * @param maxChunkSize the largest body piece passed on at once
   */
  public OriginCodec(int maxInitialLineLength, int maxHeaderSize, int maxChunkSize) {
    ArrayDeque<HttpMethod> methods = new ArrayDeque<>(4);
    init(
        new ResponseDecoder(
            new HttpDecoderConfig()
                .setMaxInitialLineLength(maxInitialLineLength)
                .setMaxHeaderSize(maxHeaderSize)
                .setMaxChunkSize(maxChunkSize),
            methods),
        new RequestEncoder(methods));
  }

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

  private static boolean sameBytes(byte[] a, int start, int length, byte[] b, int bStart) {
    return Arrays.equals(a, start, start + length, b, bStart, bStart + length); // vectorized
  }

  /** Records each request's method so that its response is decoded accordingly. */
  public static final class RequestEncoder extends HttpRequestEncoder {
    private final ArrayDeque<HttpMethod> methods;

    RequestEncoder(ArrayDeque<HttpMethod> methods) {
      this.methods = methods;
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Object msg, List<Object> out)
        throws Exception {
      if (msg instanceof HttpRequest r) {
        methods.offer(r.method());
      }
      super.encode(ctx, msg, out);
    }
  }

  /** Netty's response decoder with constants for what repeats from response to response. */
  public static final class ResponseDecoder extends HttpResponseDecoder {
    private final ArrayDeque<HttpMethod> methods;

    /** The status code of the status line being split, for its reason phrase. */
    private int code;

    ResponseDecoder(HttpDecoderConfig config, ArrayDeque<HttpMethod> methods) {
      super(config);
      this.methods = methods;
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpMessage msg) {
      int status = ((HttpResponse) msg).status().code();
      if (status >= 100 && status < 200) {
        return super.isContentAlwaysEmpty(msg); // interim responses answer no request of their own
      }
      HttpMethod method = methods.poll();
      if (HttpMethod.HEAD.equals(method)) {
        return true;
      }
      return super.isContentAlwaysEmpty(msg);
    }

    @Override
    protected AsciiString splitHeaderName(byte[] sb, int start, int length) {
      AsciiString known = known(sb, start, length);
      return known != null ? known : super.splitHeaderName(sb, start, length);
    }

    private static @Nullable AsciiString known(byte[] sb, int start, int length) {
      if (length <= 0 || length >= NAMES.length || sb[start] < 0) {
        return null;
      }
      AsciiString[] candidates = NAMES[length][sb[start]];
      if (candidates != null) {
        for (AsciiString n : candidates) {
          if (sameBytes(sb, start, length, n.array(), n.arrayOffset())) {
            return n;
          }
        }
      }
      return null;
    }

    @Override
    protected String splitFirstWordInitialLine(byte[] sb, int start, int length) {
      if (length == HTTP_1_1_BYTES.length && sameBytes(sb, start, length, HTTP_1_1_BYTES, 0)) {
        return HTTP_1_1;
      }
      return super.splitFirstWordInitialLine(sb, start, length);
    }

    @Override
    protected String splitSecondWordInitialLine(byte[] sb, int start, int length) {
      code = 0;
      if (length == 3) {
        int c = (sb[start] - '0') * 100 + (sb[start + 1] - '0') * 10 + (sb[start + 2] - '0');
        if (c >= 100
            && c < CODES.length
            && sb[start + 1] >= '0'
            && sb[start + 1] <= '9'
            && sb[start + 2] >= '0'
            && sb[start + 2] <= '9') {
          code = c;
          return CODES[c];
        }
      }
      return super.splitSecondWordInitialLine(sb, start, length);
    }

    @Override
    protected String splitThirdWordInitialLine(byte[] sb, int start, int length) {
      String reason = code == 0 ? null : REASONS[code];
      if (reason != null) {
        byte[] bytes = REASON_BYTES[code];
        if (bytes.length == length && sameBytes(sb, start, length, bytes, 0)) {
          return reason;
        }
      }
      return super.splitThirdWordInitialLine(sb, start, length);
    }
  }
}
