package dev.parapet.proxy.cache;

import dev.parapet.core.time.HttpDate;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import org.jspecify.annotations.Nullable;

/**
 * Validation of stored responses (RFC 9111 §4.3).
 *
 * <ul>
 *   <li>{@link #addValidators}: the conditional request the cache sends for one of its entries
 *       (§4.3.1): {@code If-None-Match} from the stored {@code ETag}, {@code If-Modified-Since}
 *       from the stored {@code Last-Modified} (the cache's own validators replace any the client
 *       sent: the cache is validating its entry, and answers the client's conditionals itself with
 *       {@link #clientNotModified}).
 *   <li>{@link #validatorsMatch}: does a 304 update this entry (§4.3.4)? A strong ETag in the 304
 *       must equal the stored strong ETag; a weak one must match weakly; with no ETag, a
 *       Last-Modified in the 304 must equal the stored one. A 304 with no validator at all updates
 *       the entry: it answers a conditional built from this entry's validators alone (RFC 9110
 *       §15.4.5 does not require the 304 to repeat Last-Modified).
 *   <li>{@link #clientNotModified}: may the cache answer the client's own conditional GET/HEAD with
 *       304 from a usable entry (§4.3.2)? {@code If-None-Match} (weak comparison, {@code *})
 *       decides when present; otherwise {@code If-Modified-Since} against the stored {@code
 *       Last-Modified} (or, lacking one, {@code Date}).
 * </ul>
 */
public final class Revalidation {
  private Revalidation() {}

  /**
   * Sets the entry's validators on an outgoing conditional request; returns false when the entry
   * has none (then the request is a plain fetch).
   */
  public static boolean addValidators(CachedResponse entry, HttpHeaders outgoing) {
    outgoing.remove(HttpHeaderNames.IF_NONE_MATCH);
    outgoing.remove(HttpHeaderNames.IF_MODIFIED_SINCE);
    outgoing.remove(HttpHeaderNames.IF_MATCH);
    outgoing.remove(HttpHeaderNames.IF_UNMODIFIED_SINCE);
    outgoing.remove(HttpHeaderNames.IF_RANGE);
    boolean any = false;
    String etag = entry.etag();
    if (etag != null) {
      outgoing.set(HttpHeaderNames.IF_NONE_MATCH, etag);
      any = true;
    }
    String lastModified = entry.lastModified();
    if (lastModified != null) {
      outgoing.set(HttpHeaderNames.IF_MODIFIED_SINCE, lastModified);
      any = true;
    }
    return any;
  }

  /** True when a 304 with these headers may update {@code entry} (§4.3.4). */
  public static boolean validatorsMatch(CachedResponse entry, HttpHeaders notModified) {
    String newTag = notModified.get(HttpHeaderNames.ETAG);
    if (newTag != null) {
      String stored = entry.etag();
      if (stored == null) {
        return false;
      }
      return isWeak(newTag) ? weakEquals(newTag, stored) : strongEquals(newTag, stored);
    }
    String newLm = notModified.get(HttpHeaderNames.LAST_MODIFIED);
    if (newLm != null) {
      return newLm.equals(entry.lastModified());
    }
    return true;
  }

  /**
   * True when the client's conditional request is satisfied by {@code entry}: answer 304.
   *
   * @param nowEpochMillis wall clock, only for parsing a two-digit-year date
   */
  public static boolean clientNotModified(
      HttpHeaders requestHeaders, CachedResponse entry, long nowEpochMillis) {
    String inm = requestHeaders.get(HttpHeaderNames.IF_NONE_MATCH);
    if (inm != null) {
      String etag = entry.etag();
      return etag != null && listMatchesWeakly(inm, etag);
    }
    String ims = requestHeaders.get(HttpHeaderNames.IF_MODIFIED_SINCE);
    if (ims == null) {
      return false;
    }
    long since = HttpDate.parseAnyCase(ims, nowEpochMillis);
    if (since == HttpDate.INVALID) {
      return false; // an invalid date is ignored (RFC 9110 §13.1.3)
    }
    String lm = entry.lastModified();
    long modified =
        HttpDate.parseAnyCase(
            lm != null ? lm : entry.headers().get(HttpHeaderNames.DATE), nowEpochMillis);
    return modified != HttpDate.INVALID && modified <= since;
  }

  /** {@code If-None-Match} list (or {@code *}) against one stored ETag, weak comparison. */
  static boolean listMatchesWeakly(String list, String etag) {
    String trimmed = list.trim();
    if (trimmed.equals("*")) {
      return true;
    }
    int i = 0;
    int n = list.length();
    while (i < n) {
      char c = list.charAt(i);
      if (c == ' ' || c == '\t' || c == ',') {
        i++;
        continue;
      }
      int start = i;
      if (list.startsWith("W/", i)) {
        i += 2;
      }
      if (i >= n || list.charAt(i) != '"') {
        return false; // malformed list: no match
      }
      int close = list.indexOf('"', i + 1);
      if (close < 0) {
        return false;
      }
      if (weakEquals(list.substring(start, close + 1), etag)) {
        return true;
      }
      i = close + 1;
    }
    return false;
  }

  static boolean isWeak(String tag) {
    return tag.trim().startsWith("W/");
  }

  /** Weak comparison (RFC 9110 §8.8.3.2): opaque tags equal, W/ ignored. */
  static boolean weakEquals(String a, String b) {
    return opaque(a).equals(opaque(b));
  }

  /** Strong comparison: neither weak and the opaque tags equal. */
  static boolean strongEquals(String a, String b) {
    return !isWeak(a) && !isWeak(b) && opaque(a).equals(opaque(b));
  }

  private static String opaque(@Nullable String tag) {
    if (tag == null) {
      return "";
    }
    String t = tag.trim();
    return t.startsWith("W/") ? t.substring(2) : t;
  }
}
