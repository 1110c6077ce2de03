package dev.parapet.proxy.cache;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Purging stored responses ({@code POST /admin/purge}): by exact URL (every variant of it), by URL
 * prefix (same host, target starting with the prefix's path and query), or by surrogate key (the
 * tags of the origin's {@code Surrogate-Key} / {@code Cache-Tag} fields). A hard purge removes the
 * responses; a soft one marks them stale, so they are used again only after validation with the
 * origin — or served stale where stale is allowed (stale-if-error counts from the purge), which
 * keeps a sick origin protected while content is being invalidated.
 *
 * <p>A prefix or a key is matched against every stored URI (a scan of the store, bounded by its
 * size; no index to keep in step with eviction). A fetch in flight when the purge runs stores what
 * it receives afterwards.
 */
public final class Purge {
  /** What a purge selects by. */
  public enum By {
    URL,
    PREFIX,
    KEY;

    /** The label value and the JSON field name. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * @param purged the stored responses (variants) purged
   */
  public record Result(By by, String value, boolean soft, int purged) {}

  private Purge() {}

  /**
   * Runs one purge.
   *
   * @param value an absolute URL ({@code http://host/path?query}) for {@link By#URL} and {@link
   *     By#PREFIX}, a tag for {@link By#KEY}; the URL's http and https entries are both purged,
   *     whichever scheme it is written with
   * @throws IllegalArgumentException when {@code value} is not what {@code by} expects
   */
  public static Result run(EdgeCache edge, By by, String value, boolean soft, long nowNanos) {
    ResponseCache store = edge.store();
    int n =
        switch (by) {
          case URL -> {
            CacheKey http = key(value, false);
            CacheKey https = key(value, true);
            yield store.purge(http, key -> true, e -> true, soft, nowNanos)
                + store.purge(https, key -> true, e -> true, soft, nowNanos);
          }
          case PREFIX -> {
            CacheKey http = key(value, false);
            CacheKey https = key(value, true);
            yield store.purge(
                null,
                key -> {
                  CacheKey p = key.secure() ? https : http;
                  return key.host().equals(p.host()) && key.target().startsWith(p.target());
                },
                e -> true,
                soft,
                nowNanos);
          }
          case KEY -> {
            String tag = value.trim();
            if (tag.isEmpty() || tag.indexOf(' ') >= 0 || tag.indexOf(',') >= 0) {
              throw new IllegalArgumentException(
                  "key : '" + value + "' (expected: one surrogate key, without spaces or commas)");
            }
            yield store.purge(null, key -> true, e -> e.tags().contains(tag), soft, nowNanos);
          }
        };
    for (int i = 0; i < n; i++) {
      edge.count(EdgeCache.Status.PURGED);
    }
    return new Result(by, value, soft, n);
  }

  /** The cache key of an absolute http(s) URL. */
  static CacheKey key(String url) {
    return key(url, false);
  }

  /** The key of {@code url}'s host and target as requested over https ({@code secure}) or http. */
  static CacheKey key(String url, boolean secure) {
    URI u;
    try {
      u = new URI(url.trim());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          "url : '" + url + "' (expected: an absolute URL like http://host/path)", e);
    }
    String scheme = u.getScheme();
    String authority = u.getRawAuthority();
    if (scheme == null
        || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
        || authority == null
        || authority.isEmpty()) {
      throw new IllegalArgumentException(
          "url : '" + url + "' (expected: an absolute URL like http://host/path)");
    }
    String path = u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath();
    String query = u.getRawQuery();
    return CacheKey.of(authority, query == null ? path : path + "?" + query, secure);
  }
}
