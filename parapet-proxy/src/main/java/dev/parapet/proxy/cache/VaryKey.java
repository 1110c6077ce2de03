package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * The secondary cache key (RFC 9111 §4.1): the values, in a request, of the fields a stored
 * response names in {@code Vary}. A stored response is used for a request only if the two requests
 * have the same secondary key.
 *
 * <p>Normalization, limited to what §4.1 allows: field names are case-insensitive and their order
 * in {@code Vary} does not matter (sorted, duplicates dropped); several field lines of one field
 * are combined with {@code ,} (RFC 9110 §5.3); whitespace around commas is removed and runs of
 * spaces or tabs become one space; values of {@code Accept-Encoding} (content-codings are
 * case-insensitive, RFC 9110 §8.4.1) are lower-cased, other values keep their case. A field absent
 * from the request matches only a request where it is absent too (§4.1) — it is encoded apart from
 * an empty value.
 */
public final class VaryKey {
  /** The Vary field names of a response that has no {@code Vary}. */
  public static final List<String> NONE = List.of();

  /** The secondary key of a response without {@code Vary}. */
  public static final String EMPTY = "";

  private static final char ABSENT_MARK = '\u0001';
  private static final char SEPARATOR = '\u0000';

  private VaryKey() {}

  /** True when {@code Vary} contains {@code *}: the response can never be reused (not stored). */
  public static boolean isStar(HttpHeaders responseHeaders) {
    for (String line : responseHeaders.getAll(HttpHeaderNames.VARY)) {
      for (String token : line.split(",", -1)) {
        if (token.trim().equals("*")) {
          return true;
        }
      }
    }
    return false;
  }

  /** Lower-case, sorted, distinct field names from every {@code Vary} line; {@link #NONE}. */
  public static List<String> fieldNames(HttpHeaders responseHeaders) {
    List<String> lines = responseHeaders.getAll(HttpHeaderNames.VARY);
    if (lines.isEmpty()) {
      return NONE;
    }
    List<String> names = new ArrayList<>();
    for (String line : lines) {
      for (String token : line.split(",", -1)) {
        String t = token.trim().toLowerCase(Locale.ROOT);
        if (!t.isEmpty() && !names.contains(t)) {
          names.add(t);
        }
      }
    }
    if (names.isEmpty()) {
      return NONE;
    }
    Collections.sort(names);
    return List.copyOf(names);
  }

  /** The secondary key of {@code requestHeaders} for a response varying on {@code names}. */
  public static String of(List<String> names, HttpHeaders requestHeaders) {
    if (names.isEmpty()) {
      return EMPTY;
    }
    StringBuilder b = new StringBuilder(32 * names.size());
    for (String name : names) {
      b.append(name).append(':');
      List<String> lines = requestHeaders.getAll(name);
      if (lines.isEmpty()) {
        b.append(ABSENT_MARK);
      } else {
        boolean lower = name.equals("accept-encoding");
        for (int i = 0; i < lines.size(); i++) {
          if (i > 0) {
            b.append(',');
          }
          appendNormalized(b, lines.get(i), lower);
        }
      }
      b.append(SEPARATOR);
    }
    return b.toString();
  }

  /** Appends a value without leading/trailing OWS, OWS around , and ;, and runs of OWS as one. */
  private static void appendNormalized(StringBuilder b, String v, boolean lower) {
    int n = v.length();
    boolean pendingSpace = false;
    boolean atItemStart = true;
    for (int i = 0; i < n; i++) {
      char c = v.charAt(i);
      if (c == ' ' || c == '\t') {
        pendingSpace = !atItemStart;
        continue;
      }
      if (c == ',' || c == ';') {
        b.append(c);
        pendingSpace = false;
        atItemStart = true;
        continue;
      }
      if (pendingSpace) {
        b.append(' ');
        pendingSpace = false;
      }
      atItemStart = false;
      b.append(lower && c >= 'A' && c <= 'Z' ? (char) (c + 32) : c);
    }
  }
}
