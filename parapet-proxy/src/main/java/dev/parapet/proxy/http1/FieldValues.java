package dev.parapet.proxy.http1;

import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.http.HttpHeaderValidationUtil;
import io.netty.util.AsciiString;
import java.util.Calendar;
import java.util.Date;
import org.jspecify.annotations.Nullable;

/**
 * How {@link HeaderList} reads and checks field values: list elements (RFC 9110 §5.6.1) and decimal
 * numbers read in place, values checked before they are set as Netty's headers check them (no CR,
 * LF or NUL).
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
    int end = -1;
    while (end < v.length()) {
      int start = end + 1;
      end = AsciiString.indexOf(v, ',', start);
      end = end < 0 ? v.length() : end;
      int e = end;
      while (start < e && isOws(v.charAt(start))) {
        start++;
      }
      while (e > start && isOws(v.charAt(e - 1))) {
        e--;
      }
      if (e - start == element.length()
          && AsciiString.regionMatches(v, ignoreCase, start, element, 0, e - start)) {
        return true;
      }
    }
    return false;
  }

  private static boolean isOws(char c) {
    return c == ' ' || c == '\t';
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
}
