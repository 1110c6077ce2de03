package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.HttpHeaders;
import org.jspecify.annotations.Nullable;

/**
 * One member of the {@code Cache-Status} response field (RFC 9211): this cache's name followed by
 * its parameters, serialized as a Structured Field list member (RFC 8941 §4.1):
 *
 * <pre>
 *   edge-1; hit; ttl=42                        fresh hit
 *   edge-1; hit; ttl=-42; detail="stale breaker-open"   stale served, origin not asked
 *   edge-1; fwd=miss; fwd-status=200; stored   miss, fetched and stored before the head went out
 *   edge-1; fwd=stale; fwd-status=304; ttl=60  revalidated
 *   edge-1; fwd=miss; collapsed                answered by another request's fetch
 * </pre>
 *
 * <p>The name and {@code detail} are written as sf-tokens when they are valid tokens and as
 * sf-strings otherwise ({@code "} and {@code \} escaped, characters outside printable ASCII
 * replaced by {@code ?}, since an sf-string cannot carry them). A mutable builder, one per
 * response; {@link #toString()} is the field value.
 */
public final class CacheStatus {
  static final String FIELD = "Cache-Status";

  /** RFC 9211 §2.2 {@code fwd} values. */
  public enum Fwd {
    BYPASS("bypass"),
    METHOD("method"),
    URI_MISS("uri-miss"),
    VARY_MISS("vary-miss"),
    MISS("miss"),
    REQUEST("request"),
    STALE("stale"),
    PARTIAL("partial");

    private final String token;

    Fwd(String token) {
      this.token = token;
    }

    public String token() {
      return token;
    }
  }

  private final String name;
  private boolean hit;
  private @Nullable Fwd fwd;
  private int fwdStatus = -1;
  private boolean hasTtl;
  private long ttl;
  private boolean stored;
  private boolean collapsed;
  private @Nullable String detail;

  private CacheStatus(String name) {
    this.name = name;
  }

  /** A member for the cache called {@code name} (the proxy's {@code name:}). */
  public static CacheStatus of(String name) {
    return new CacheStatus(name);
  }

  /** Answered from the cache without going forward. */
  public CacheStatus hit() {
    this.hit = true;
    return this;
  }

  /** Went forward to the origin, and why. */
  public CacheStatus fwd(Fwd reason) {
    this.fwd = reason;
    return this;
  }

  /** The status the origin answered the forwarded request with. */
  public CacheStatus fwdStatus(int status) {
    this.fwdStatus = status;
    return this;
  }

  /** Remaining freshness in seconds, negative when the response served is stale. */
  public CacheStatus ttl(long seconds) {
    this.hasTtl = true;
    this.ttl = seconds;
    return this;
  }

  /**
   * The response was stored (RFC 9211 §2.5): said once it is, never of a body still to come, which
   * may yet be cut off or refused by the store.
   */
  public CacheStatus stored() {
    this.stored = true;
    return this;
  }

  /** The request was collapsed into another request's origin fetch. */
  public CacheStatus collapsed() {
    this.collapsed = true;
    return this;
  }

  /** Implementation-specific detail, e.g. {@code stale breaker-open}. */
  public CacheStatus detail(String text) {
    this.detail = text;
    return this;
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder(64);
    item(b, name);
    if (hit) {
      b.append("; hit");
    }
    Fwd f = fwd;
    if (f != null) {
      b.append("; fwd=").append(f.token());
    }
    if (fwdStatus >= 0) {
      b.append("; fwd-status=").append(fwdStatus);
    }
    if (hasTtl) {
      b.append("; ttl=").append(ttl);
    }
    if (stored) {
      b.append("; stored");
    }
    if (collapsed) {
      b.append("; collapsed");
    }
    String d = detail;
    if (d != null) {
      b.append("; detail=");
      item(b, d);
    }
    return b.toString();
  }

  /**
   * The field value after this hop: the upstream's members (closest to the origin first) followed
   * by ours (RFC 9211 §2).
   */
  public static String append(@Nullable String upstream, CacheStatus ours) {
    String mine = ours.toString();
    return upstream == null || upstream.isBlank() ? mine : upstream.trim() + ", " + mine;
  }

  /** Appends {@code ours} to the {@code Cache-Status} field of {@code h}. */
  static void addTo(HttpHeaders h, CacheStatus ours) {
    h.set(FIELD, append(h.get(FIELD), ours));
  }

  /** Writes {@code s} as an sf-token when it is one, else as an sf-string. */
  static void item(StringBuilder b, String s) {
    if (isToken(s)) {
      b.append(s);
      return;
    }
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20 || c > 0x7E) {
        b.append('?');
      } else {
        b.append(c);
      }
    }
    b.append('"');
  }

  /** RFC 8941 §3.3.4: {@code (ALPHA / "*") *(tchar / ":" / "/")}. */
  static boolean isToken(String s) {
    if (s.isEmpty()) {
      return false;
    }
    char first = s.charAt(0);
    if (!(isAlpha(first) || first == '*')) {
      return false;
    }
    for (int i = 1; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!(isAlpha(c)
          || (c >= '0' && c <= '9')
          || c == ':'
          || c == '/'
          || "!#$%&'*+-.^_`|~".indexOf(c) >= 0)) {
        return false;
      }
    }
    return true;
  }

  private static boolean isAlpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }
}
