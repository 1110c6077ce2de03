package dev.parapet.proxy.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory store: Caffeine bounded by bytes ({@code maximumWeight} = {@code cache.max_size},
 * each entry weighing its header text, body and a fixed overhead), W-TinyLFU eviction.
 *
 * <p>One Caffeine entry per primary key ({@link CacheKey}) holds that URI's variants (RFC 9111
 * §4.1): an immutable list, newest first, replaced as a whole through {@code asMap().compute} so
 * Caffeine re-weighs it. A new response replaces the variant with the same secondary key and drops
 * variants stored under a different {@code Vary} (the origin changed what it varies on); at most
 * {@link #MAX_VARIANTS} are kept. Invalidating a URI (§4.4) removes all its variants at once.
 *
 * <p>A response larger than {@code maxObjectBytes} is not stored (it would evict many small hits to
 * be evicted itself soon after). Lookups never read a clock: the caller passes {@code nowNanos}.
 */
public final class ResponseCache {
  /** Variants kept per URI. */
  public static final int MAX_VARIANTS = 8;

  private final Cache<CacheKey, Variants> cache;
  private final long maxBytes;
  private final long maxObjectBytes;

  /**
   * A cache whose largest object is a sixteenth of {@code maxBytes} (16 MiB of the default 256
   * MiB), so one object can never push out more than a small share of the hits.
   */
  public ResponseCache(long maxBytes, Executor executor) {
    this(maxBytes, Math.max(1, maxBytes / 16), executor);
  }

  /**
   * @param maxBytes {@code cache.max_size}
   * @param maxObjectBytes largest single response stored
   * @param executor runs Caffeine's maintenance (eviction); {@code Runnable::run} runs it on the
   *     calling thread, which makes tests deterministic
   */
  public ResponseCache(long maxBytes, long maxObjectBytes, Executor executor) {
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("maxBytes : " + maxBytes + " (expected: > 0)");
    }
    if (maxObjectBytes <= 0 || maxObjectBytes > maxBytes) {
      throw new IllegalArgumentException(
          "maxObjectBytes : " + maxObjectBytes + " (expected: in (0, " + maxBytes + "])");
    }
    this.maxBytes = maxBytes;
    this.maxObjectBytes = maxObjectBytes;
    this.cache =
        Caffeine.newBuilder()
            .maximumWeight(maxBytes)
            .weigher((CacheKey k, Variants v) -> v.weight(k))
            .executor(executor)
            .build();
  }

  /**
   * Finds the variant for this request and judges it (RFC 9111 §4, §4.2, §5.2.1).
   *
   * @param requestHeaders the client's request headers (Vary'd values, request directives)
   * @param nowNanos monotonic now
   */
  public Lookup lookup(CacheKey key, HttpHeaders requestHeaders, long nowNanos) {
    Variants variants = cache.getIfPresent(key);
    if (variants == null) {
      return Lookup.MISS;
    }
    CachedResponse entry = variants.match(requestHeaders);
    if (entry == null) {
      return Lookup.MISS;
    }
    long age = entry.currentAgeNanos(nowNanos);
    long remaining = entry.lifetimeNanos() - age;
    CacheControl req = CacheControl.of(requestHeaders);
    boolean usable =
        remaining > 0
            && !entry.cacheControl().noCache()
            && !req.noCache()
            && (req.maxAge() == CacheControl.ABSENT || age <= Freshness.seconds(req.maxAge()))
            && (req.minFresh() == CacheControl.ABSENT
                || remaining >= Freshness.seconds(req.minFresh()));
    return new Lookup(usable ? Lookup.Kind.FRESH : Lookup.Kind.STALE, entry, age);
  }

  /**
   * Stores a response (already judged {@link Storability#STORE}) under {@code key}; returns false
   * when it is larger than {@code maxObjectBytes}.
   */
  public boolean store(CacheKey key, CachedResponse response) {
    if (response.weight() > maxObjectBytes) {
      return false;
    }
    cache.asMap().compute(key, (k, old) -> Variants.with(old, response));
    return true;
  }

  /**
   * Replaces {@code previous} by {@code updated} (a 304 merge) if {@code previous} is still stored;
   * a concurrent store or invalidation wins over the merge.
   */
  public void replace(CacheKey key, CachedResponse previous, CachedResponse updated) {
    cache.asMap().computeIfPresent(key, (k, old) -> old.replace(previous, updated));
  }

  /** Removes every variant of {@code key}. */
  public void invalidate(CacheKey key) {
    cache.invalidate(key);
  }

  /**
   * Purges the stored responses whose key passes {@code keys} and which pass {@code entries}: hard
   * (removed) or soft (marked stale at {@code nowNanos}: used again only after validation, or
   * served where stale is allowed, so stale-if-error still protects the origin). Every stored URI
   * is looked at unless {@code exact} names the one key: an admin operation, not a request path.
   *
   * @return the responses (variants) purged
   */
  public int purge(
      @Nullable CacheKey exact,
      java.util.function.Predicate<CacheKey> keys,
      java.util.function.Predicate<CachedResponse> entries,
      boolean soft,
      long nowNanos) {
    int[] purged = {0};
    Iterable<CacheKey> candidates =
        exact != null ? List.of(exact) : List.copyOf(cache.asMap().keySet());
    for (CacheKey k : candidates) {
      if (!keys.test(k)) {
        continue;
      }
      cache
          .asMap()
          .computeIfPresent(
              k,
              (key, v) -> {
                purged[0] += v.count(entries);
                return v.purge(entries, soft, nowNanos);
              });
    }
    return purged[0];
  }

  /**
   * Invalidation after an unsafe request (RFC 9111 §4.4): on a non-error response (2xx, 3xx) to a
   * method that is not known to be safe, the target URI is invalidated, and so are the URIs in
   * {@code Location} and {@code Content-Location} when they are on the same host (a different host
   * could be used to evict someone else's entries).
   *
   * @return the keys invalidated
   */
  public List<CacheKey> invalidateAfter(
      HttpMethod method,
      CacheKey target,
      int status,
      @Nullable String location,
      @Nullable String contentLocation) {
    if (!CacheKey.isUnsafe(method) || status < 200 || status >= 400) {
      return List.of();
    }
    List<CacheKey> keys = new ArrayList<>(3);
    keys.add(target);
    addSameHost(keys, target, location);
    addSameHost(keys, target, contentLocation);
    for (CacheKey k : keys) {
      cache.invalidate(k);
    }
    return keys;
  }

  private static void addSameHost(List<CacheKey> keys, CacheKey target, @Nullable String ref) {
    if (ref == null || ref.isBlank()) {
      return;
    }
    try {
      String scheme0 = target.secure() ? "https" : "http";
      URI resolved = new URI(scheme0 + "://" + target.host() + target.target()).resolve(ref.trim());
      String authority = resolved.getRawAuthority();
      String scheme = resolved.getScheme();
      if (authority == null || scheme == null || !scheme.equalsIgnoreCase(scheme0)) {
        return;
      }
      String path = resolved.getRawPath() == null ? "/" : resolved.getRawPath();
      String query = resolved.getRawQuery();
      CacheKey k =
          CacheKey.of(authority, query == null ? path : path + "?" + query, target.secure());
      if (k.host().equals(target.host()) && !keys.contains(k)) {
        keys.add(k);
      }
    } catch (URISyntaxException | IllegalArgumentException e) {
      // an unparsable Location invalidates nothing extra (MAY in §4.4)
    }
  }

  /** Runs pending maintenance (eviction) now. */
  public void cleanUp() {
    cache.cleanUp();
  }

  /** Bytes currently counted against {@code max_size}. */
  public long weightedSizeBytes() {
    return cache.policy().eviction().orElseThrow().weightedSize().orElse(0L);
  }

  /** Number of URIs stored (each with one or more variants), approximately. */
  public long estimatedUris() {
    return cache.estimatedSize();
  }

  public long maxBytes() {
    return maxBytes;
  }

  /** The largest response stored; larger ones are served but not kept. */
  public long maxObjectBytes() {
    return maxObjectBytes;
  }

  /** The variants of one URI: immutable, newest first. */
  static final class Variants {
    private final CachedResponse[] entries;

    private Variants(CachedResponse[] entries) {
      this.entries = entries;
    }

    static Variants with(@Nullable Variants old, CachedResponse added) {
      if (old == null) {
        return new Variants(new CachedResponse[] {added});
      }
      List<CachedResponse> next = new ArrayList<>(old.entries.length + 1);
      next.add(added);
      for (CachedResponse e : old.entries) {
        boolean sameVary = e.varyNames().equals(added.varyNames());
        if (sameVary && !e.varyKey().equals(added.varyKey()) && next.size() < MAX_VARIANTS) {
          next.add(e);
        }
      }
      return new Variants(next.toArray(new CachedResponse[0]));
    }

    Variants replace(CachedResponse previous, CachedResponse updated) {
      for (int i = 0; i < entries.length; i++) {
        if (entries[i] == previous) {
          CachedResponse[] copy = entries.clone();
          copy[i] = updated;
          return new Variants(copy);
        }
      }
      return this;
    }

    /** Without the variants {@code selected} picks (hard), or with them stale (soft). */
    @Nullable Variants purge(
        java.util.function.Predicate<CachedResponse> selected, boolean soft, long nowNanos) {
      List<CachedResponse> next = new ArrayList<>(entries.length);
      for (CachedResponse e : entries) {
        if (!selected.test(e)) {
          next.add(e);
        } else if (soft) {
          next.add(e.markedStale(nowNanos));
        }
      }
      return next.isEmpty() ? null : new Variants(next.toArray(new CachedResponse[0]));
    }

    /** How many variants {@code selected} picks. */
    int count(java.util.function.Predicate<CachedResponse> selected) {
      int n = 0;
      for (CachedResponse e : entries) {
        if (selected.test(e)) {
          n++;
        }
      }
      return n;
    }

    @Nullable CachedResponse match(HttpHeaders requestHeaders) {
      for (CachedResponse e : entries) {
        if (e.matchesVariant(requestHeaders)) {
          return e;
        }
      }
      return null;
    }

    int weight(CacheKey key) {
      long w = (key.host().length() + key.target().length()) * 2L;
      for (CachedResponse e : entries) {
        w += e.weight();
      }
      return (int) Math.min(Integer.MAX_VALUE, w);
    }

    int size() {
      return entries.length;
    }
  }
}
