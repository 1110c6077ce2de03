package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.CacheControl.ABSENT;
import static dev.parapet.proxy.cache.CacheControl.IMMUTABLE;
import static dev.parapet.proxy.cache.CacheControl.MAX_DELTA_SECONDS;
import static dev.parapet.proxy.cache.CacheControl.MAX_STALE_ANY;
import static dev.parapet.proxy.cache.CacheControl.MUST_REVALIDATE;
import static dev.parapet.proxy.cache.CacheControl.MUST_UNDERSTAND;
import static dev.parapet.proxy.cache.CacheControl.NO_CACHE;
import static dev.parapet.proxy.cache.CacheControl.NO_CACHE_FIELDS;
import static dev.parapet.proxy.cache.CacheControl.NO_STORE;
import static dev.parapet.proxy.cache.CacheControl.NO_TRANSFORM;
import static dev.parapet.proxy.cache.CacheControl.ONLY_IF_CACHED;
import static dev.parapet.proxy.cache.CacheControl.PRIVATE;
import static dev.parapet.proxy.cache.CacheControl.PRIVATE_FIELDS;
import static dev.parapet.proxy.cache.CacheControl.PROXY_REVALIDATE;
import static dev.parapet.proxy.cache.CacheControl.PUBLIC;

import io.netty.handler.codec.http.HttpHeaders;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The syntax side of {@link CacheControl}: one pass over the field values of a {@code
 * Cache-Control} (or a targeted field), directive by directive, without substrings except for the
 * field names of a qualified {@code no-cache} or {@code private}; and the Structured Fields check
 * that decides whether a targeted field (RFC 9213) counts at all. What a directive's value means
 * when it is invalid or repeated (RFC 9111 §4.2.1) is settled here, as {@link CacheControl}
 * documents. Mutable, confined to one parse.
 */
final class CacheControlParser {
  long maxAge = ABSENT;
  long sMaxAge = ABSENT;
  long maxStale = ABSENT;
  long minFresh = ABSENT;
  long swr = ABSENT;
  long sie = ABSENT;
  int flags;
  boolean targeted;
  // allocated only when a qualified no-cache / private appears
  @Nullable List<String> noCacheFields;
  @Nullable List<String> privateFields;

  CacheControl build() {
    return new CacheControl(this);
  }

  void parse(CharSequence s) {
    int n = s.length();
    int i = 0;
    while (i < n) {
      // Skip separators and whitespace before a directive name.
      char c = s.charAt(i);
      if (c == ',' || c == ' ' || c == '\t') {
        i++;
        continue;
      }
      int nameStart = i;
      while (i < n && s.charAt(i) != '=' && s.charAt(i) != ',' && !parameters(s.charAt(i))) {
        i++;
      }
      int nameEnd = i;
      while (nameEnd > nameStart && isOws(s.charAt(nameEnd - 1))) {
        nameEnd--;
      }
      int valueStart = -1;
      int valueEnd = -1;
      boolean quoted = false;
      if (i < n && s.charAt(i) == '=') {
        i++;
        while (i < n && isOws(s.charAt(i))) {
          i++;
        }
        if (i < n && s.charAt(i) == '"') {
          quoted = true;
          valueStart = ++i;
          while (i < n && s.charAt(i) != '"') {
            if (s.charAt(i) == '\\' && i + 1 < n) {
              i++;
            }
            i++;
          }
          valueEnd = i;
          if (i < n) {
            i++; // closing quote
          }
          while (i < n && s.charAt(i) != ',') {
            i++; // junk after a quoted-string is ignored
          }
        } else {
          valueStart = i;
          while (i < n && s.charAt(i) != ',' && !parameters(s.charAt(i))) {
            i++;
          }
          valueEnd = i;
          while (valueEnd > valueStart && isOws(s.charAt(valueEnd - 1))) {
            valueEnd--;
          }
        }
      }
      i = skipParameters(s, i);
      directive(s, nameStart, nameEnd, valueStart, valueEnd, quoted);
    }
  }

  private void directive(CharSequence s, int ns, int ne, int vs, int ve, boolean quoted) {
    boolean hasValue = vs >= 0;
    switch (ne - ns) {
      case 6 -> {
        if (is(s, ns, "public")) {
          flags |= PUBLIC;
        }
      }
      case 7 -> {
        if (is(s, ns, "max-age")) {
          long v = delta(s, vs, ve);
          maxAge = freshness(maxAge, v);
        } else if (is(s, ns, "private")) {
          if (hasValue) {
            flags |= PRIVATE_FIELDS;
            if (privateFields == null) {
              privateFields = new ArrayList<>(2);
            }
            fieldNames(s, vs, ve, quoted, privateFields);
          } else {
            flags |= PRIVATE;
          }
        }
      }
      case 8 -> {
        if (is(s, ns, "no-store")) {
          flags |= NO_STORE;
        } else if (is(s, ns, "no-cache")) {
          if (hasValue) {
            flags |= NO_CACHE_FIELDS;
            if (noCacheFields == null) {
              noCacheFields = new ArrayList<>(2);
            }
            fieldNames(s, vs, ve, quoted, noCacheFields);
          } else {
            flags |= NO_CACHE;
          }
        } else if (is(s, ns, "s-maxage")) {
          sMaxAge = freshness(sMaxAge, delta(s, vs, ve));
        }
      }
      case 9 -> {
        if (is(s, ns, "max-stale")) {
          if (!hasValue) {
            flags |= MAX_STALE_ANY;
            maxStale = MAX_DELTA_SECONDS;
          } else {
            long v = delta(s, vs, ve);
            if (v >= 0 && (flags & MAX_STALE_ANY) == 0) {
              maxStale = maxStale == ABSENT ? v : Math.min(maxStale, v);
            }
          }
        } else if (is(s, ns, "min-fresh")) {
          long v = delta(s, vs, ve);
          if (v >= 0) {
            minFresh = Math.max(minFresh, v);
          }
        } else if (is(s, ns, "immutable")) {
          flags |= IMMUTABLE;
        }
      }
      case 12 -> {
        if (is(s, ns, "no-transform")) {
          flags |= NO_TRANSFORM;
        }
      }
      case 14 -> {
        if (is(s, ns, "only-if-cached")) {
          flags |= ONLY_IF_CACHED;
        } else if (is(s, ns, "stale-if-error")) {
          sie = smaller(sie, delta(s, vs, ve));
        }
      }
      case 15 -> {
        if (is(s, ns, "must-revalidate")) {
          flags |= MUST_REVALIDATE;
        } else if (is(s, ns, "must-understand")) {
          flags |= MUST_UNDERSTAND;
        }
      }
      case 16 -> {
        if (is(s, ns, "proxy-revalidate")) {
          flags |= PROXY_REVALIDATE;
        }
      }
      case 22 -> {
        if (is(s, ns, "stale-while-revalidate")) {
          swr = smaller(swr, delta(s, vs, ve));
        }
      }
      default -> {
        // unknown directive (or extension): ignored, as RFC 9111 §5.2.3 requires
      }
    }
  }

  /**
   * max-age / s-maxage: the first occurrence counts (§4.2.1: "either the first occurrence should be
   * used or the response should be considered stale"); an invalid value (-2) is 0, stale at once
   * (§4.2.1: caches are encouraged to consider invalid freshness information stale).
   */
  private static long freshness(long current, long parsed) {
    if (current != ABSENT) {
      return current;
    }
    return parsed < 0 ? 0 : parsed;
  }

  /** stale-while-revalidate / stale-if-error: invalid means 0, duplicates keep the smaller. */
  private static long smaller(long current, long parsed) {
    long v = parsed < 0 ? 0 : parsed;
    return current == ABSENT ? v : Math.min(current, v);
  }

  /** Delta-seconds in s[vs, ve), or -2 when missing or not all digits. */
  private static long delta(CharSequence s, int vs, int ve) {
    if (vs < 0 || ve <= vs) {
      return -2;
    }
    long v = 0;
    for (int i = vs; i < ve; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -2;
      }
      v = Math.min(MAX_DELTA_SECONDS, v * 10 + (c - '0'));
    }
    return v;
  }

  private static void fieldNames(CharSequence s, int vs, int ve, boolean quoted, List<String> out) {
    int i = vs;
    while (i < ve) {
      char c = s.charAt(i);
      if (isNameSeparator(c)) {
        i++;
        continue;
      }
      int start = i;
      while (i < ve && !isNameSeparator(s.charAt(i))) {
        i++;
      }
      String name = s.subSequence(start, i).toString().toLowerCase(Locale.ROOT);
      if (!out.contains(name)) {
        out.add(name);
      }
      if (!quoted) {
        return; // a token argument holds one name only
      }
    }
  }

  private static boolean is(CharSequence s, int from, String lowerName) {
    for (int k = 0; k < lowerName.length(); k++) {
      char c = s.charAt(from + k);
      if (c >= 'A' && c <= 'Z') {
        c = (char) (c + 32);
      }
      if (c != lowerName.charAt(k)) {
        return false;
      }
    }
    return true;
  }

  /** Field names are tokens: anything else between them is a separator. */
  private static boolean isNameSeparator(char c) {
    return c == ',' || c == '"' || c == '\\' || isOws(c);
  }

  /**
   * Whether {@code c} starts a member's parameters: in a targeted field (a Structured Fields
   * dictionary, RFC 8941 §3.2) {@code max-age=60;x=1} is {@code max-age=60} with a parameter that
   * no directive defines, so it is read and ignored (RFC 9213 §2.1).
   */
  private boolean parameters(char c) {
    return targeted && c == ';';
  }

  /** In a targeted field, past the parameters at {@code i} (quoted values included). */
  private int skipParameters(CharSequence s, int i) {
    if (!targeted) {
      return i;
    }
    int n = s.length();
    boolean inString = false;
    while (i < n && (inString || s.charAt(i) != ',')) {
      char c = s.charAt(i);
      if (inString && c == '\\') {
        i++;
      } else if (c == '"') {
        inString = !inString;
      }
      i++;
    }
    return i;
  }

  private static boolean isOws(char c) {
    return c == ' ' || c == '\t';
  }

  /**
   * A targeted field is a Structured Fields dictionary (RFC 8941 §3.2): keys are lower-case (a-z,
   * digits, {@code _ - . *}, starting with a letter or {@code *}), and the delta-seconds directives
   * ({@code max-age}, {@code s-maxage}, {@code stale-while-revalidate}, {@code stale-if-error})
   * have Integer values; an invalid or empty field is ignored as a whole (RFC 9213 §2.1), so
   * neither {@code Max-Age=60} nor {@code max-age="60"} counts.
   */
  static boolean validTargeted(HttpHeaders headers, CharSequence name) {
    boolean any = false;
    for (String line : headers.getAll(name)) {
      int i = 0;
      int n = line.length();
      boolean expectKey = true;
      boolean inString = false;
      while (i < n) {
        char c = line.charAt(i);
        if (inString) {
          if (c == '\\') {
            i++;
          } else if (c == '"') {
            inString = false;
          }
        } else if (c == '"') {
          inString = true;
        } else if (c == ',') {
          expectKey = true;
        } else if (expectKey && c != ' ' && c != '\t') {
          if (!((c >= 'a' && c <= 'z') || c == '*')) {
            return false;
          }
          int start = i;
          while (i < n && isKeyChar(line.charAt(i))) {
            i++;
          }
          if (i == start) {
            return false;
          }
          if (i < n && line.charAt(i) == '=' && isSecondsKey(line, start, i)) {
            // the delta-seconds directives are Integers in a targeted field: {@code
            // max-age="60"} is a String there, the wrong type, and the field is invalid
            int digits = i + 1;
            if (digits < n && line.charAt(digits) == '-') {
              digits++;
            }
            int end = digits;
            while (end < n && line.charAt(end) >= '0' && line.charAt(end) <= '9') {
              end++;
            }
            if (end == digits || end - digits > 15) {
              return false;
            }
            char after = end < n ? line.charAt(end) : ',';
            if (after != ',' && after != ';' && after != ' ' && after != '\t') {
              return false; // 6x, 6.5: not an Integer
            }
            i = end;
          }
          any = true;
          expectKey = false;
          continue;
        }
        i++;
      }
      if (inString) {
        return false;
      }
    }
    return any;
  }

  private static final String[] SECONDS_KEYS = {
    "max-age", "s-maxage", "stale-while-revalidate", "stale-if-error"
  };

  /** Whether {@code line[start, end)} names a directive whose value is delta-seconds. */
  private static boolean isSecondsKey(String line, int start, int end) {
    for (String k : SECONDS_KEYS) {
      if (k.length() == end - start && line.startsWith(k, start)) {
        return true;
      }
    }
    return false;
  }

  private static boolean isKeyChar(char c) {
    return (c >= 'a' && c <= 'z')
        || (c >= '0' && c <= '9')
        || c == '_'
        || c == '-'
        || c == '.'
        || c == '*';
  }
}
