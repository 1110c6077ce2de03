package dev.parapet.proxy.cache;

import org.jspecify.annotations.Nullable;

/**
 * What {@link ResponseCache#lookup} found.
 *
 * @param kind fresh, stale or miss
 * @param entry the stored response; null only for {@link Kind#MISS}
 * @param currentAgeNanos the entry's current age (§4.2.3); 0 for a miss
 */
public record Lookup(Kind kind, @Nullable CachedResponse entry, long currentAgeNanos) {
  /** The result of a miss (shared, allocation-free). */
  public static final Lookup MISS = new Lookup(Kind.MISS, null, 0);

  /** What a lookup can find. */
  public enum Kind {
    /** Usable without contacting the origin: fresh, and the request's directives accept it. */
    FRESH,
    /**
     * Found, but not usable as is: stale, or the response's {@code no-cache} or the request's
     * {@code no-cache} / {@code max-age} / {@code min-fresh} require validation first. {@link
     * StalePolicy} says whether it may be served anyway.
     */
    STALE,
    /** No entry, or none for this request's {@code Vary}'d values. */
    MISS
  }

  /** The entry of a FRESH or STALE result. */
  public CachedResponse requireEntry() {
    CachedResponse e = entry;
    if (e == null) {
      throw new IllegalStateException("lookup : MISS (expected: FRESH or STALE)");
    }
    return e;
  }

  /** How long past its freshness the entry is (0 when fresh or a miss). */
  public long stalenessNanos() {
    CachedResponse e = entry;
    return e == null ? 0 : Math.max(0, currentAgeNanos - e.lifetimeNanos());
  }

  /** Cache-Status {@code ttl}: remaining freshness in seconds, negative when stale. */
  public long ttlSeconds() {
    CachedResponse e = entry;
    return e == null ? 0 : Freshness.ttlSeconds(e.lifetimeNanos(), currentAgeNanos);
  }
}
