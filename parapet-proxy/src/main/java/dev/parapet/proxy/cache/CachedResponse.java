package dev.parapet.proxy.cache;

import dev.parapet.core.time.HttpDate;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.ReadOnlyHttpHeaders;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One stored response: status, header fields, body, the times it was requested and received, and
 * what was derived from them once at store time (Cache-Control, freshness lifetime, initial age,
 * the {@code Vary} names and this variant's secondary key). Immutable and safe to share across
 * event loops.
 *
 * <p>What is stored (RFC 9111 §3.1): the headers the caller passes, which must already be free of
 * hop-by-hop fields (the request path strips them for forwarding anyway), minus {@code Age} (it is
 * recomputed on every use, §4.2.3) and minus the fields named by a qualified {@code private} or
 * {@code no-cache} (§5.2.2.7: a shared cache must not store them; §5.2.2.4: the response may be
 * reused when they are excluded). A missing or invalid {@code Date} is replaced by the receipt time
 * (RFC 9110 §6.6.1). {@code Content-Length} is set to the stored body's length.
 */
public final class CachedResponse {
  /** Bytes counted for an entry besides its header text and body (objects, arrays, map node). */
  static final int OVERHEAD_BYTES = 256;

  private final int status;
  private final HttpHeaders headers;
  private final byte[] body;
  private final long requestNanos;
  private final long responseNanos;
  private final long responseEpochMillis;
  private final CacheControl cacheControl;
  private final long lifetimeNanos;
  private final long initialAgeNanos;
  private final List<String> varyNames;
  private final String varyKey;
  private final @Nullable String etag;
  private final @Nullable String lastModified;
  private final int weight;
  private final List<String> tags;

  /** Response fields naming the surrogate keys of a response (stored here, not sent on). */
  static final String SURROGATE_KEY = "Surrogate-Key";

  static final String CACHE_TAG = "Cache-Tag";

  private CachedResponse(
      int status,
      HttpHeaders headers,
      byte[] body,
      long requestNanos,
      long responseNanos,
      long responseEpochMillis,
      @Nullable String ageHeader,
      Heuristic heuristic,
      List<String> varyNames,
      String varyKey,
      List<String> tags) {
    this.status = status;
    this.tags = tags;
    this.body = body;
    this.requestNanos = requestNanos;
    this.responseNanos = responseNanos;
    this.responseEpochMillis = responseEpochMillis;
    this.cacheControl = CacheControl.ofResponse(headers);
    long date = HttpDate.parseAnyCase(headers.get(HttpHeaderNames.DATE), responseEpochMillis);
    if (date == HttpDate.INVALID) {
      date = responseEpochMillis;
      headers.set(HttpHeaderNames.DATE, HttpDate.format(responseEpochMillis));
    }
    this.lifetimeNanos =
        Freshness.lifetimeNanos(
            status, cacheControl, headers, date, responseEpochMillis, heuristic);
    this.initialAgeNanos =
        Freshness.initialAgeNanos(
            ageHeader, date, requestNanos, responseNanos, responseEpochMillis);
    this.varyNames = varyNames;
    this.varyKey = varyKey;
    this.etag = headers.get(HttpHeaderNames.ETAG);
    this.lastModified = headers.get(HttpHeaderNames.LAST_MODIFIED);
    List<CharSequence> pairs = new ArrayList<>(headers.size() * 2);
    long headerBytes = 0;
    for (Map.Entry<String, String> e : headers) {
      pairs.add(e.getKey());
      pairs.add(e.getValue());
      headerBytes += e.getKey().length() + e.getValue().length() + 4;
    }
    this.headers = new ReadOnlyHttpHeaders(false, pairs.toArray(new CharSequence[0]));
    long tagBytes = 0;
    for (String t : tags) {
      tagBytes += t.length() + 16;
    }
    long w = OVERHEAD_BYTES + headerBytes + body.length + varyKey.length() + tagBytes;
    this.weight = (int) Math.min(Integer.MAX_VALUE, w);
  }

  /** A copy stale from {@code nowNanos} on (a soft purge). */
  private CachedResponse(CachedResponse from, long lifetimeNanos) {
    this.status = from.status;
    this.headers = from.headers;
    this.body = from.body;
    this.requestNanos = from.requestNanos;
    this.responseNanos = from.responseNanos;
    this.responseEpochMillis = from.responseEpochMillis;
    this.cacheControl = from.cacheControl;
    this.lifetimeNanos = lifetimeNanos;
    this.initialAgeNanos = from.initialAgeNanos;
    this.varyNames = from.varyNames;
    this.varyKey = from.varyKey;
    this.etag = from.etag;
    this.lastModified = from.lastModified;
    this.weight = from.weight;
    this.tags = from.tags;
  }

  /**
   * This entry marked stale at {@code nowNanos} (a soft purge): used again only after validation,
   * or stale where stale is allowed (stale-if-error counts from now).
   */
  public CachedResponse markedStale(long nowNanos) {
    long age = currentAgeNanos(nowNanos);
    return age >= lifetimeNanos ? this : new CachedResponse(this, age);
  }

  /**
   * The surrogate keys (tags) of this response, from its {@code Surrogate-Key} (space-separated)
   * and {@code Cache-Tag} (comma-separated) fields, for purging by key. Those fields are not stored
   * and never reach a client.
   */
  public List<String> tags() {
    return tags;
  }

  /** Surrogate keys are for this cache's purges, not for clients: removed from what they get. */
  static void stripTags(HttpHeaders h) {
    h.remove(SURROGATE_KEY);
    h.remove(CACHE_TAG);
  }

  /** Removes {@code Surrogate-Key} and {@code Cache-Tag} from {@code h}; returns their tags. */
  static List<String> takeTags(HttpHeaders h) {
    List<String> sk = h.getAll(SURROGATE_KEY);
    List<String> ct = h.getAll(CACHE_TAG);
    if (sk.isEmpty() && ct.isEmpty()) {
      return List.of();
    }
    List<String> tags = new ArrayList<>();
    for (String v : sk) {
      for (String t : v.trim().split("[ \\t]+")) {
        if (!t.isEmpty() && !tags.contains(t)) {
          tags.add(t);
        }
      }
    }
    for (String v : ct) {
      for (String t : v.split(",")) {
        String tag = t.trim();
        if (!tag.isEmpty() && !tags.contains(tag)) {
          tags.add(tag);
        }
      }
    }
    h.remove(SURROGATE_KEY);
    h.remove(CACHE_TAG);
    return List.copyOf(tags);
  }

  /**
   * A response as received from the origin.
   *
   * @param status the response status
   * @param responseHeaders the origin's headers, hop-by-hop fields already removed (copied)
   * @param body the complete body; owned by the entry from now on (not copied, never modify it)
   * @param requestHeaders the request that produced it, for the secondary key
   * @param requestNanos monotonic time the request was sent to the origin
   * @param responseNanos monotonic time the response head was received
   * @param responseEpochMillis wall-clock time the response head was received
   * @param defaultTtlNanos the route's {@code default_ttl}, 0 for none
   */
  public static CachedResponse of(
      int status,
      HttpHeaders responseHeaders,
      byte[] body,
      HttpHeaders requestHeaders,
      long requestNanos,
      long responseNanos,
      long responseEpochMillis,
      long defaultTtlNanos) {
    return of(
        status,
        responseHeaders,
        body,
        requestHeaders,
        requestNanos,
        responseNanos,
        responseEpochMillis,
        Heuristic.defaultTtl(defaultTtlNanos));
  }

  /**
   * A response as received from the origin, its freshness from {@code heuristic} when it states
   * none (see the other {@code of} for the parameters).
   */
  public static CachedResponse of(
      int status,
      HttpHeaders responseHeaders,
      byte[] body,
      HttpHeaders requestHeaders,
      long requestNanos,
      long responseNanos,
      long responseEpochMillis,
      Heuristic heuristic) {
    HttpHeaders h = new DefaultHttpHeaders().set(responseHeaders);
    List<String> tags = takeTags(h);
    String age = h.get(HttpHeaderNames.AGE);
    h.remove(HttpHeaderNames.AGE);
    CacheControl cc = CacheControl.ofResponse(h);
    for (String name : cc.privateFields()) {
      h.remove(name);
    }
    for (String name : cc.noCacheFields()) {
      h.remove(name);
    }
    if (status != 204) {
      h.set(HttpHeaderNames.CONTENT_LENGTH, body.length);
    }
    List<String> vary = VaryKey.fieldNames(h);
    return new CachedResponse(
        status,
        h,
        body,
        requestNanos,
        responseNanos,
        responseEpochMillis,
        age,
        heuristic,
        vary,
        VaryKey.of(vary, requestHeaders),
        tags);
  }

  /**
   * This entry updated by a 304 (RFC 9111 §3.2, §4.3.4): the 304's fields replace stored ones of
   * the same name (Content-Length excepted), the body is kept, freshness and age restart from the
   * revalidation's times. The variant (Vary names and secondary key) is kept.
   *
   * @param notModified the 304's headers, hop-by-hop fields removed
   * @param requestNanos monotonic time the conditional request was sent
   * @param responseNanos monotonic time the 304 was received
   * @param responseEpochMillis wall-clock time the 304 was received
   * @param defaultTtlNanos the route's {@code default_ttl}
   * @return the updated entry, or null when the 304's validators name another representation (then
   *     the stored entry must not be updated, §4.3.4)
   */
  public @Nullable CachedResponse withNotModified(
      HttpHeaders notModified,
      long requestNanos,
      long responseNanos,
      long responseEpochMillis,
      long defaultTtlNanos) {
    return withNotModified(
        notModified,
        requestNanos,
        responseNanos,
        responseEpochMillis,
        Heuristic.defaultTtl(defaultTtlNanos));
  }

  /** As the other {@code withNotModified}, with the route's {@code heuristic}. */
  public @Nullable CachedResponse withNotModified(
      HttpHeaders notModified,
      long requestNanos,
      long responseNanos,
      long responseEpochMillis,
      Heuristic heuristic) {
    if (!Revalidation.validatorsMatch(this, notModified)) {
      return null;
    }
    HttpHeaders h = new DefaultHttpHeaders().set(headers);
    h.remove(HttpHeaderNames.DATE); // the 304's Date (or its receipt time) replaces it
    for (String name : notModified.names()) {
      if (name.equalsIgnoreCase("content-length")
          || name.equalsIgnoreCase("age")
          || name.equalsIgnoreCase(SURROGATE_KEY)
          || name.equalsIgnoreCase(CACHE_TAG)) {
        continue;
      }
      h.remove(name);
      h.add(name, notModified.getAll(name));
    }
    CacheControl cc = CacheControl.ofResponse(h);
    for (String name : cc.privateFields()) {
      h.remove(name);
    }
    for (String name : cc.noCacheFields()) {
      h.remove(name);
    }
    return new CachedResponse(
        status,
        h,
        body,
        requestNanos,
        responseNanos,
        responseEpochMillis,
        notModified.get(HttpHeaderNames.AGE),
        heuristic,
        varyNames,
        varyKey,
        tags);
  }

  public int status() {
    return status;
  }

  /** Stored header fields (read-only; {@code copy()} them to build a response). */
  public HttpHeaders headers() {
    return headers;
  }

  /** The body, read-only, positioned at 0. */
  public ByteBuffer body() {
    return ByteBuffer.wrap(body).asReadOnlyBuffer();
  }

  public int bodyLength() {
    return body.length;
  }

  public long requestNanos() {
    return requestNanos;
  }

  public long responseNanos() {
    return responseNanos;
  }

  public long responseEpochMillis() {
    return responseEpochMillis;
  }

  public CacheControl cacheControl() {
    return cacheControl;
  }

  /** Freshness lifetime (§4.2.1). */
  public long lifetimeNanos() {
    return lifetimeNanos;
  }

  /** {@code current_age} at {@code nowNanos} (§4.2.3). */
  public long currentAgeNanos(long nowNanos) {
    return initialAgeNanos + Math.max(0, nowNanos - responseNanos);
  }

  /** The {@code Age} value to send at {@code nowNanos}: whole seconds, rounded down. */
  public long ageSeconds(long nowNanos) {
    return currentAgeNanos(nowNanos) / 1_000_000_000L;
  }

  /** True when {@code freshness_lifetime > current_age} (§4.2). */
  public boolean isFresh(long nowNanos) {
    return lifetimeNanos - currentAgeNanos(nowNanos) > 0;
  }

  /** How long past its freshness the entry is at {@code nowNanos}; 0 while fresh. */
  public long stalenessNanos(long nowNanos) {
    return Math.max(0, currentAgeNanos(nowNanos) - lifetimeNanos);
  }

  /** Cache-Status {@code ttl} at {@code nowNanos}: negative when stale. */
  public long ttlSeconds(long nowNanos) {
    return Freshness.ttlSeconds(lifetimeNanos, currentAgeNanos(nowNanos));
  }

  /** Lower-case field names of the response's {@code Vary}. */
  public List<String> varyNames() {
    return varyNames;
  }

  /** This variant's secondary key (the Vary'd values of the request that produced it). */
  public String varyKey() {
    return varyKey;
  }

  /** True when this variant was produced by a request with the same Vary'd values (§4.1). */
  public boolean matchesVariant(HttpHeaders requestHeaders) {
    return varyNames.isEmpty() || varyKey.equals(VaryKey.of(varyNames, requestHeaders));
  }

  public @Nullable String etag() {
    return etag;
  }

  public @Nullable String lastModified() {
    return lastModified;
  }

  /** Bytes this entry counts against {@code cache.max_size}: headers, body and overhead. */
  public int weight() {
    return weight;
  }
}
