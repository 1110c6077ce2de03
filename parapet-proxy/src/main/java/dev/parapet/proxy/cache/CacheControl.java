package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.Iterator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The directives of a request's or a response's {@code Cache-Control} (RFC 9111 §5.2, RFC 5861), or
 * of the targeted field that replaces it (RFC 9213), as values. {@link CacheControlParser} reads
 * them in one pass over every field line.
 *
 * <p>Tolerance (RFC 9111 §5.2: "recipients ought to accept both forms"): directive names are
 * case-insensitive, arguments may be tokens or quoted-strings ({@code max-age="60"}), spaces around
 * {@code ,} and {@code =} are ignored, unknown directives are skipped. Delta-seconds above 2^31 are
 * 2147483648 (§1.2.2).
 *
 * <p>Invalid or repeated values as §4.2.1 suggests: a {@code max-age} or {@code s-maxage} that is
 * not a number is 0 (the response is stale at once); when one appears twice, the first occurrence
 * counts; an invalid {@code stale-while-revalidate} / {@code stale-if-error} is 0 (no stale
 * serving) and duplicates keep the smaller one. Request-side values that are invalid are ignored
 * (they only ever ask the cache for less). An unqualified {@code no-cache} or {@code private} wins
 * over a qualified one (the most restrictive directive is honoured).
 */
public final class CacheControl {
  /** A delta-seconds directive that is not present. */
  public static final long ABSENT = -1L;

  /** Largest delta-seconds value (RFC 9111 §1.2.2). */
  public static final long MAX_DELTA_SECONDS = 2_147_483_648L;

  /** No {@code Cache-Control} at all. */
  public static final CacheControl EMPTY = new CacheControlParser().build();

  private final long maxAge;
  private final long sMaxAge;
  private final long maxStale;
  private final long minFresh;
  private final long staleWhileRevalidate;
  private final long staleIfError;
  private final int flags;
  private final List<String> noCacheFields;
  private final List<String> privateFields;
  private final boolean targeted;

  static final int NO_STORE = 1;
  static final int NO_CACHE = 1 << 1;
  static final int NO_CACHE_FIELDS = 1 << 2;
  static final int PRIVATE = 1 << 3;
  static final int PRIVATE_FIELDS = 1 << 4;
  static final int PUBLIC = 1 << 5;
  static final int MUST_REVALIDATE = 1 << 6;
  static final int PROXY_REVALIDATE = 1 << 7;
  static final int ONLY_IF_CACHED = 1 << 8;
  static final int MAX_STALE_ANY = 1 << 9;
  static final int NO_TRANSFORM = 1 << 10;
  static final int IMMUTABLE = 1 << 11;
  static final int MUST_UNDERSTAND = 1 << 12;

  CacheControl(CacheControlParser p) {
    this.maxAge = p.maxAge;
    this.sMaxAge = p.sMaxAge;
    this.maxStale = p.maxStale;
    this.minFresh = p.minFresh;
    this.staleWhileRevalidate = p.swr;
    this.staleIfError = p.sie;
    int f = p.flags;
    if ((f & NO_CACHE) != 0) {
      f &= ~NO_CACHE_FIELDS;
    }
    if ((f & PRIVATE) != 0) {
      f &= ~PRIVATE_FIELDS;
    }
    this.flags = f;
    List<String> nc = p.noCacheFields;
    List<String> pf = p.privateFields;
    this.noCacheFields = (f & NO_CACHE_FIELDS) != 0 && nc != null ? List.copyOf(nc) : List.of();
    this.privateFields = (f & PRIVATE_FIELDS) != 0 && pf != null ? List.copyOf(pf) : List.of();
    this.targeted = p.targeted;
  }

  /**
   * True when these directives came from a targeted field (RFC 9213): then the response's {@code
   * Expires} is ignored too.
   */
  public boolean targeted() {
    return targeted;
  }

  /** The field targeted at Parapet tiers (RFC 9213): first in precedence. */
  public static final String PARAPET_CACHE_CONTROL = "Parapet-Cache-Control";

  /** The field targeted at every CDN (RFC 9213 §3): before {@code Cache-Control}. */
  public static final String CDN_CACHE_CONTROL = "CDN-Cache-Control";

  /** Parses every {@code Cache-Control} field line of {@code headers} (a request's, say). */
  public static CacheControl of(HttpHeaders headers) {
    return of(headers, HttpHeaderNames.CACHE_CONTROL, false);
  }

  /**
   * A response's directives for this cache (RFC 9213 §2.2): the first targeted field with a valid,
   * non-empty value — {@code Parapet-Cache-Control}, then {@code CDN-Cache-Control} — and then
   * {@code Cache-Control} and {@code Expires} are ignored ({@link #targeted()}); otherwise {@code
   * Cache-Control}.
   */
  public static CacheControl ofResponse(HttpHeaders headers) {
    if (headers.contains(PARAPET_CACHE_CONTROL)
        && CacheControlParser.validTargeted(headers, PARAPET_CACHE_CONTROL)) {
      return of(headers, PARAPET_CACHE_CONTROL, true);
    }
    if (headers.contains(CDN_CACHE_CONTROL)
        && CacheControlParser.validTargeted(headers, CDN_CACHE_CONTROL)) {
      return of(headers, CDN_CACHE_CONTROL, true);
    }
    return of(headers);
  }

  private static CacheControl of(HttpHeaders headers, CharSequence name, boolean targeted) {
    Iterator<? extends CharSequence> it = headers.valueCharSequenceIterator(name);
    if (!it.hasNext()) {
      return EMPTY;
    }
    CacheControlParser p = new CacheControlParser();
    p.targeted = targeted;
    CharSequence first = it.next();
    if (!it.hasNext()) {
      p.parse(first);
    } else {
      // Several field lines: getAll keeps their order (the value iterator need not), and the
      // first occurrence of a repeated directive is the one that counts.
      for (String line : headers.getAll(name)) {
        p.parse(line);
      }
    }
    return p.build();
  }

  /** Parses one field value (several directives separated by commas). */
  public static CacheControl parse(@Nullable CharSequence value) {
    if (value == null || value.length() == 0) {
      return EMPTY;
    }
    CacheControlParser p = new CacheControlParser();
    p.parse(value);
    return p.build();
  }

  /** {@code max-age} in seconds, or {@link #ABSENT}. */
  public long maxAge() {
    return maxAge;
  }

  /** {@code s-maxage} in seconds (response only), or {@link #ABSENT}. */
  public long sMaxAge() {
    return sMaxAge;
  }

  /**
   * {@code max-stale} in seconds (request only), {@link #ABSENT}, or {@link #MAX_DELTA_SECONDS}
   * when given without a value (any staleness is acceptable).
   */
  public long maxStale() {
    return maxStale;
  }

  /** {@code min-fresh} in seconds (request only), or {@link #ABSENT}. */
  public long minFresh() {
    return minFresh;
  }

  /** RFC 5861 {@code stale-while-revalidate} in seconds, or {@link #ABSENT}. */
  public long staleWhileRevalidate() {
    return staleWhileRevalidate;
  }

  /** RFC 5861 {@code stale-if-error} in seconds, or {@link #ABSENT}. */
  public long staleIfError() {
    return staleIfError;
  }

  public boolean noStore() {
    return (flags & NO_STORE) != 0;
  }

  /** Unqualified {@code no-cache}: never used without successful validation. */
  public boolean noCache() {
    return (flags & NO_CACHE) != 0;
  }

  /**
   * Lower-case field names of a qualified {@code no-cache="a, b"} (response only): the response may
   * be reused if those fields are left out. Empty when absent or when unqualified.
   */
  public List<String> noCacheFields() {
    return noCacheFields;
  }

  /** Unqualified {@code private}: a shared cache must not store the response. */
  public boolean isPrivate() {
    return (flags & PRIVATE) != 0;
  }

  /**
   * Lower-case field names of a qualified {@code private="a, b"}: a shared cache may store the
   * response without those fields. Empty when absent or when unqualified.
   */
  public List<String> privateFields() {
    return privateFields;
  }

  public boolean isPublic() {
    return (flags & PUBLIC) != 0;
  }

  public boolean mustRevalidate() {
    return (flags & MUST_REVALIDATE) != 0;
  }

  public boolean proxyRevalidate() {
    return (flags & PROXY_REVALIDATE) != 0;
  }

  public boolean onlyIfCached() {
    return (flags & ONLY_IF_CACHED) != 0;
  }

  public boolean noTransform() {
    return (flags & NO_TRANSFORM) != 0;
  }

  public boolean immutable() {
    return (flags & IMMUTABLE) != 0;
  }

  /** {@code must-understand} (RFC 9111 §5.2.2.3). */
  public boolean mustUnderstand() {
    return (flags & MUST_UNDERSTAND) != 0;
  }

  /**
   * True when a shared cache must not serve this response stale (RFC 9111 §4.2.4): {@code
   * must-revalidate}, {@code proxy-revalidate}, {@code s-maxage} (which implies proxy-revalidate,
   * §5.2.2.10) or an unqualified {@code no-cache}.
   */
  public boolean forbidsStale() {
    return (flags & (MUST_REVALIDATE | PROXY_REVALIDATE | NO_CACHE)) != 0 || sMaxAge != ABSENT;
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    flag(b, NO_STORE, "no-store");
    flag(b, NO_CACHE, "no-cache");
    fields(b, "no-cache", noCacheFields);
    flag(b, PRIVATE, "private");
    fields(b, "private", privateFields);
    flag(b, PUBLIC, "public");
    flag(b, MUST_REVALIDATE, "must-revalidate");
    flag(b, PROXY_REVALIDATE, "proxy-revalidate");
    flag(b, ONLY_IF_CACHED, "only-if-cached");
    flag(b, NO_TRANSFORM, "no-transform");
    flag(b, IMMUTABLE, "immutable");
    flag(b, MUST_UNDERSTAND, "must-understand");
    delta(b, "max-age", maxAge);
    delta(b, "s-maxage", sMaxAge);
    if ((flags & MAX_STALE_ANY) != 0) {
      sep(b).append("max-stale");
    } else {
      delta(b, "max-stale", maxStale);
    }
    delta(b, "min-fresh", minFresh);
    delta(b, "stale-while-revalidate", staleWhileRevalidate);
    delta(b, "stale-if-error", staleIfError);
    return b.toString();
  }

  private void flag(StringBuilder b, int bit, String name) {
    if ((flags & bit) != 0) {
      sep(b).append(name);
    }
  }

  private static void fields(StringBuilder b, String name, List<String> fields) {
    if (!fields.isEmpty()) {
      sep(b).append(name).append("=\"").append(String.join(", ", fields)).append('"');
    }
  }

  private static void delta(StringBuilder b, String name, long v) {
    if (v != ABSENT) {
      sep(b).append(name).append('=').append(v);
    }
  }

  private static StringBuilder sep(StringBuilder b) {
    return b.isEmpty() ? b : b.append(", ");
  }
}
