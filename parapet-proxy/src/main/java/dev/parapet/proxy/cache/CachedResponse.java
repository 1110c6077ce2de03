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

  private CachedResponse(
      int status,
      HttpHeaders headers,
      byte[] body,
      long requestNanos,
      long responseNanos,
      long responseEpochMillis,
      @Nullable String ageHeader,
      long defaultTtlNanos,
      List<String> varyNames,
      String varyKey) {
    this.status = status;
    this.body = body;
    this.requestNanos = requestNanos;
    this.responseNanos = responseNanos;
    this.responseEpochMillis = responseEpochMillis;
    this.cacheControl = CacheControl.of(headers);
    long date = HttpDate.parse(headers.get(HttpHeaderNames.DATE), responseEpochMillis);
    if (date == HttpDate.INVALID) {
      date = responseEpochMillis;
      headers.set(HttpHeaderNames.DATE, HttpDate.format(responseEpochMillis));
    }
    this.lifetimeNanos =
        Freshness.lifetimeNanos(
            status, cacheControl, headers, date, responseEpochMillis, defaultTtlNanos);
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
    long w = OVERHEAD_BYTES + headerBytes + body.length + varyKey.length();
    this.weight = (int) Math.min(Integer.MAX_VALUE, w);
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
    HttpHeaders h = new DefaultHttpHeaders().set(responseHeaders);
    String age = h.get(HttpHeaderNames.AGE);
    h.remove(HttpHeaderNames.AGE);
    CacheControl cc = CacheControl.of(h);
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
        defaultTtlNanos,
        vary,
        VaryKey.of(vary, requestHeaders));
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
    if (!Revalidation.validatorsMatch(this, notModified)) {
      return null;
    }
    HttpHeaders h = new DefaultHttpHeaders().set(headers);
    h.remove(HttpHeaderNames.DATE); // the 304's Date (or its receipt time) replaces it
    for (String name : notModified.names()) {
      if (name.equalsIgnoreCase("content-length") || name.equalsIgnoreCase("age")) {
        continue;
      }
      h.remove(name);
      h.add(name, notModified.getAll(name));
    }
    CacheControl cc = CacheControl.of(h);
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
        defaultTtlNanos,
        varyNames,
        varyKey);
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
