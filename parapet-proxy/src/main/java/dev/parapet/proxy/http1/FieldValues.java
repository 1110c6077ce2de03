package dev.parapet.proxy.http1;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.http.HttpHeaderValidationUtil;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.Calendar;
import java.util.Date;
import org.jspecify.annotations.Nullable;

/**
 * How {@link HeaderList} reads, checks and writes field values: list elements (RFC 9110 §5.6.1) and
 * decimal numbers read in place, values checked before they are set as Netty's headers check them
 * (no CR, LF or NUL), numbers written as digits without a string.
 */
final class FieldValues {
  private FieldValues() {}

  /**
   * Whether {@code v} lists {@code element} (elements between commas, whitespace around them
   * ignored), compared in place. Not Netty's list matching, which trims with {@code
   * AsciiString.trim}: that compares signed bytes, so it strips obs-text (bytes from 0x80) off the
   * ends of a received value as if it were whitespace (byte 0xFF then {@code close} would list
   * close).
   */
  static boolean lists(CharSequence v, CharSequence element, boolean ignoreCase) {
    // Characters above 0xFF (only in a value set as a String) become '?', which no token holds.
    AsciiString a = v instanceof AsciiString bytes ? bytes : new AsciiString(v);
    return lists(a.array(), a.arrayOffset(), a.arrayOffset() + a.length(), element, ignoreCase);
  }

  /** Whether the value in {@code b[from, to)} lists {@code element}, as {@link #lists} above. */
  static boolean lists(byte[] b, int from, int to, CharSequence element, boolean ignoreCase) {
    int end = from - 1;
    while (end < to) {
      int start = end + 1;
      end = ByteScan.indexOf(b, start, to, (byte) ',');
      end = end < 0 ? to : end;
      int e = end;
      while (start < e && ByteScan.isOws(b[start])) {
        start++;
      }
      while (e > start && ByteScan.isOws(b[e - 1])) {
        e--;
      }
      if (e - start == element.length() && sameText(b, start, element, ignoreCase)) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code b} from {@code start} holds {@code text}, ASCII case ignored if asked. */
  private static boolean sameText(byte[] b, int start, CharSequence text, boolean ignoreCase) {
    for (int k = 0; k < text.length(); k++) {
      char x = (char) (b[start + k] & 0xFF);
      char y = text.charAt(k);
      if (x != y && !(ignoreCase && lower(x) == lower(y))) {
        return false;
      }
    }
    return true;
  }

  private static char lower(char c) {
    return c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
  }

  /** {@code v} as a decimal number within {@code [min, max]}, else null. */
  static @Nullable Long decimal(CharSequence v, long min, long max) {
    try {
      long n = Long.parseLong(v, 0, v.length(), 10);
      return n >= min && n <= max ? n : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * A value to be set: a character sequence, a date in HTTP's format, or the string of anything
   * else.
   *
   * @throws IllegalArgumentException if it holds CR, LF or NUL
   */
  static CharSequence checked(@Nullable Object value) {
    if (value == null) {
      throw new NullPointerException("value");
    }
    CharSequence v =
        value instanceof CharSequence cs
            ? cs
            : value instanceof Date d
                ? DateFormatter.format(d)
                : value instanceof Calendar c
                    ? DateFormatter.format(c.getTime())
                    : value.toString();
    if (HttpHeaderValidationUtil.validateValidHeaderValue(v) >= 0) {
      throw new IllegalArgumentException("a header value with an invalid character: " + v);
    }
    return v;
  }

  /** Writes {@code n} (at least 0) as decimal digits. */
  static void writeDigits(ByteBuf buf, int n) {
    int digits = 1;
    for (int rest = n / 10; rest > 0; rest /= 10) {
      digits++;
    }
    int at = buf.writerIndex();
    buf.ensureWritable(digits);
    int rest = n;
    for (int d = digits - 1; d >= 0; d--) {
      buf.setByte(at + d, '0' + rest % 10);
      rest /= 10;
    }
    buf.writerIndex(at + digits);
  }

  private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

  /** Writes {@code n} as 16 lower-case hex digits, leading zeros included. */
  static void writeHex(ByteBuf buf, long n) {
    int at = buf.writerIndex();
    buf.ensureWritable(16);
    for (int d = 15; d >= 0; d--) {
      buf.setByte(at + d, HEX_DIGITS[(int) (n >>> (4 * (15 - d))) & 0xF]);
    }
    buf.writerIndex(at + 16);
  }
}
