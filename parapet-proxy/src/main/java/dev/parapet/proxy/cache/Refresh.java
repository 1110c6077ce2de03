package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;

/**
 * A stale entry to revalidate behind the answer that served it (stale-while-revalidate, or an
 * incident that prefers stale): the key's flight, already led by this refresh, so requests that
 * must validate the same entry meanwhile wait for it instead of fetching again.
 */
public final class Refresh {
  final CacheKey key;
  final CachedResponse entry;
  final HttpHeaders requestHeaders;
  final Collapser.Flight<CacheKey, CachedResponse> flight;
  final String routeId;
  private final String originForm;

  Refresh(
      CacheKey key,
      CachedResponse entry,
      HttpHeaders requestHeaders,
      Collapser.Flight<CacheKey, CachedResponse> flight,
      String routeId,
      String originForm) {
    this.key = key;
    this.entry = entry;
    this.requestHeaders = requestHeaders;
    this.flight = flight;
    this.routeId = routeId;
    this.originForm = originForm;
  }

  /** Whether the entry was stored for an https request (the refresh asks the same way). */
  public boolean secure() {
    return key.secure();
  }

  /**
   * The conditional GET to send: the client's fields (not its cache directives, which were for its
   * own request), the entry's validators.
   */
  public HttpRequest request() {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, originForm);
    HttpHeaders out = r.headers();
    out.set(requestHeaders);
    out.remove(HttpHeaderNames.CONTENT_LENGTH);
    out.remove(HttpHeaderNames.TRANSFER_ENCODING);
    out.remove(HttpHeaderNames.EXPECT);
    out.remove(HttpHeaderNames.CACHE_CONTROL);
    Revalidation.addValidators(entry, out);
    return r;
  }

  /** The request path (without its query): the ring-hash key. */
  public String path() {
    int q = originForm.indexOf('?');
    return q < 0 ? originForm : originForm.substring(0, q);
  }
}
