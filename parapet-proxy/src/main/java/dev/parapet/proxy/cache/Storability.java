package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;

/**
 * May a shared cache store this response (RFC 9111 §3)? Checked in this order, the first refusal
 * wins, so each verdict names one reason (a label for logs and metrics):
 *
 * <ol>
 *   <li>the request method is GET (HEAD is answered from GET's entry but a HEAD response has no
 *       content to store; other methods are not cacheable here);
 *   <li>the status is final and neither 206 (no range support) nor 304 (not a complete response);
 *   <li>no {@code no-store} in the request (§5.2.1.5) or the response (§5.2.2.5) — {@code
 *       must-understand} is not implemented, so it never overrides no-store;
 *   <li>no unqualified {@code private} (§5.2.2.7; a qualified one only strips the named fields);
 *   <li>a request with {@code Authorization} only when the response says {@code public}, {@code
 *       s-maxage} or {@code must-revalidate} (§3.5);
 *   <li>a response with {@code Set-Cookie} only when it says {@code public} or {@code s-maxage}
 *       (explicitly meant for shared caches), or names {@code Set-Cookie} in a qualified {@code
 *       private} / {@code no-cache} (then the field is not stored). RFC 9111 allows storing it, but
 *       a shared copy of one user's cookie is the classic session leak, so this cache requires the
 *       origin to opt in;
 *   <li>{@code Vary} does not contain {@code *} (§4.1: it could never be reused);
 *   <li>the response has a freshness lifetime: explicit ({@code s-maxage}, {@code max-age}, {@code
 *       Expires}), or the route's {@code default_ttl} for a heuristically cacheable status or a
 *       {@code public} response (§3 and §4.2.2). Without any, it is not stored: this cache has no
 *       other heuristic, and storing only to revalidate would hold memory for little gain.
 * </ol>
 */
public enum Storability {
  STORE,
  METHOD,
  STATUS,
  NO_STORE,
  PRIVATE,
  AUTHORIZATION,
  SET_COOKIE,
  VARY_STAR,
  NO_FRESHNESS;

  /** True for {@link #STORE}. */
  public boolean isStorable() {
    return this == STORE;
  }

  /**
   * The verdict for one exchange.
   *
   * @param defaultTtlNanos the route's {@code default_ttl}; 0 for none
   */
  public static Storability of(
      HttpMethod method,
      HttpHeaders requestHeaders,
      int status,
      HttpHeaders responseHeaders,
      long defaultTtlNanos) {
    if (!method.equals(HttpMethod.GET)) {
      return METHOD;
    }
    if (status < 200 || status == 206 || status == 304) {
      return STATUS;
    }
    CacheControl request = CacheControl.of(requestHeaders);
    CacheControl response = CacheControl.of(responseHeaders);
    if (request.noStore() || response.noStore()) {
      return NO_STORE;
    }
    if (response.isPrivate()) {
      return PRIVATE;
    }
    boolean sharedExplicitly = response.isPublic() || response.sMaxAge() != CacheControl.ABSENT;
    if (requestHeaders.contains(HttpHeaderNames.AUTHORIZATION)
        && !(sharedExplicitly || response.mustRevalidate())) {
      return AUTHORIZATION;
    }
    if (responseHeaders.contains(HttpHeaderNames.SET_COOKIE)
        && !sharedExplicitly
        && !response.privateFields().contains("set-cookie")
        && !response.noCacheFields().contains("set-cookie")) {
      return SET_COOKIE;
    }
    if (VaryKey.isStar(responseHeaders)) {
      return VARY_STAR;
    }
    boolean explicit = Freshness.hasExplicitFreshness(response, responseHeaders);
    boolean byDefault =
        defaultTtlNanos > 0 && (Freshness.isHeuristicallyCacheable(status) || response.isPublic());
    if (!explicit && !byDefault) {
      return NO_FRESHNESS;
    }
    return STORE;
  }
}
