package dev.parapet.proxy.cache;

import dev.parapet.core.time.HttpDate;
import org.jspecify.annotations.Nullable;

/**
 * A {@code Range} request answered from a stored full response (RFC 9110 §14): one byte range —
 * {@code first-last}, {@code first-} (open-ended) or {@code -suffix} — gets a {@code 206} with
 * {@code Content-Range}; a range that starts beyond the representation gets {@code 416} with {@code
 * Content-Range} naming only the length. Anything else is ignored and the full {@code 200} is sent,
 * as §14.2 allows a server to: another unit, a syntax error, several ranges (a multipart answer is
 * not made here), or an {@code If-Range} that does not match the stored response (§13.1.5: a strong
 * entity-tag comparison, or a date equal to {@code Last-Modified}).
 *
 * @param first the first byte sent, or -1 for {@link #UNSATISFIABLE}
 * @param last the last byte sent (inclusive)
 */
record ByteRange(long first, long last) {
  /** The 416 answer. */
  static final ByteRange UNSATISFIABLE = new ByteRange(-1, -1);

  boolean satisfiable() {
    return first >= 0;
  }

  long length() {
    return last - first + 1;
  }

  /**
   * The range to answer for {@code rangeHeader} on a representation of {@code length} bytes, or
   * null to send the full response.
   */
  static @Nullable ByteRange of(
      @Nullable String rangeHeader,
      @Nullable String ifRange,
      CachedResponse entry,
      long length,
      long nowEpochMillis) {
    if (rangeHeader == null || !ifRangeMatches(ifRange, entry, nowEpochMillis)) {
      return null;
    }
    String r = rangeHeader.trim();
    int eq = r.indexOf('=');
    if (eq < 0 || !r.substring(0, eq).trim().equalsIgnoreCase("bytes")) {
      return null;
    }
    String spec = r.substring(eq + 1).trim();
    if (spec.isEmpty() || spec.indexOf(',') >= 0) {
      return null; // one range only; a list (or a stray comma) is answered in full
    }
    int dash = spec.indexOf('-');
    if (dash < 0) {
      return null;
    }
    String a = spec.substring(0, dash).trim();
    String b = spec.substring(dash + 1).trim();
    if (a.isEmpty()) {
      long suffix = digits(b);
      if (suffix < 0) {
        return null;
      }
      if (suffix == 0 || length == 0) {
        return UNSATISFIABLE;
      }
      return new ByteRange(Math.max(0, length - suffix), length - 1);
    }
    long first = digits(a);
    long last = b.isEmpty() ? Long.MAX_VALUE : digits(b);
    if (first < 0 || last < 0 || last < first) {
      return null; // invalid: the Range field is ignored (§14.2)
    }
    if (first >= length) {
      return UNSATISFIABLE;
    }
    return new ByteRange(first, Math.min(last, length - 1));
  }

  /** §13.1.5: no If-Range, or one naming the stored response with a strong validator. */
  private static boolean ifRangeMatches(
      @Nullable String ifRange, CachedResponse entry, long nowEpochMillis) {
    if (ifRange == null) {
      return true;
    }
    String v = ifRange.trim();
    if (v.startsWith("\"") || v.startsWith("W/")) {
      String etag = entry.etag();
      return etag != null && Revalidation.strongEquals(v, etag);
    }
    long date = HttpDate.parseAnyCase(v, nowEpochMillis);
    long modified = HttpDate.parseAnyCase(entry.lastModified(), nowEpochMillis);
    return date != HttpDate.INVALID && modified != HttpDate.INVALID && date == modified;
  }

  /** A non-negative decimal, or -1; saturates far beyond any stored length. */
  private static long digits(String s) {
    if (s.isEmpty() || s.length() > 18) {
      return s.length() > 18 && s.chars().allMatch(Character::isDigit) ? Long.MAX_VALUE / 2 : -1;
    }
    long v = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }
}
