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
 *   <li>{@code must-understand} (§5.2.2.3): a status this cache does not understand is not stored
 *       ({@code STATUS}), one it understands is stored even with {@code no-store} in the response;
 *       otherwise no {@code no-store} in the request (§5.2.1.5) or the response (§5.2.2.5);
 *   <li>no unqualified {@code private} (§5.2.2.7; a qualified one only strips the named fields);
 *   <li>a request with {@code Authorization} only when the response says {@code public}, {@code
 *       s-maxage} or {@code must-revalidate} (§3.5);
 *   <li>a response with {@code Set-Cookie} only when it says {@code public} or {@code s-maxage}
 *       (explicitly meant for shared caches), or names {@code Set-Cookie} in a qualified {@code
 *       private} / {@code no-cache} (then the field is not stored). RFC 9111 allows storing it, but
 *       a shared copy of one user's cookie is the classic session leak, so this cache requires the
 *       origin to opt in;
 *   <li>{@code Vary} does not contain {@code *} (§4.1: it could never be reused);
 *   <li>the response has a freshness lifetime — explicit ({@code s-maxage}, {@code max-age}, {@code
 *       Expires}, any final status), or a {@link Heuristic} one (the route's {@code default_ttl},
 *       or a fraction of its age since {@code Last-Modified}) for a heuristically cacheable status
 *       or a {@code public} response (§3 and §4.2.2) — or it has {@code no-cache} and a validator
 *       ({@code ETag} or {@code Last-Modified}): then it is stored and validated before every use.
 *       Otherwise it is not stored (storing only to revalidate would hold memory for little gain).
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
   * The verdict for one exchange, with only the route's {@code default_ttl} as heuristic.
   *
   * @param defaultTtlNanos the route's {@code default_ttl}; 0 for none
   */
  public static Storability of(
      HttpMethod method,
      HttpHeaders requestHeaders,
      int status,
      HttpHeaders responseHeaders,
      long defaultTtlNanos) {
    return of(
        method,
        requestHeaders,
        status,
        responseHeaders,
        Heuristic.defaultTtl(defaultTtlNanos),
        System.currentTimeMillis());
  }

  /**
   * The verdict for one exchange.
   *
   * @param heuristic the route's heuristic freshness
   * @param nowEpochMillis wall clock, for the Last-Modified heuristic
   */
  public static Storability of(
      HttpMethod method,
      HttpHeaders requestHeaders,
      int status,
      HttpHeaders responseHeaders,
      Heuristic heuristic,
      long nowEpochMillis) {
    if (!method.equals(HttpMethod.GET)) {
      return METHOD;
    }
    if (status < 200 || status == 206 || status == 304) {
      return STATUS;
    }
    CacheControl request = CacheControl.of(requestHeaders);
    CacheControl response = CacheControl.ofResponse(responseHeaders);
    if (response.mustUnderstand()) {
      // §5.2.2.3: store only a status whose caching rules this cache implements; then no-store in
      // the response is ignored (it is there for caches that do not understand the status).
      if (!understands(status)) {
        return STATUS;
      }
      if (request.noStore()) {
        return NO_STORE;
      }
    } else if (request.noStore() || response.noStore()) {
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
    boolean heuristically =
        !explicit
            && Freshness.hasHeuristicFreshness(
                status, response, responseHeaders, heuristic, nowEpochMillis);
    // no-cache with a validator: stored, and validated before every use (§5.2.2.4)
    boolean validatedEachTime =
        response.noCache()
            && (responseHeaders.contains(HttpHeaderNames.ETAG)
                || responseHeaders.contains(HttpHeaderNames.LAST_MODIFIED));
    if (!explicit && !heuristically && !validatedEachTime) {
      return NO_FRESHNESS;
    }
    return STORE;
  }

  /**
   * Final statuses whose caching rules RFC 9110 defines and this cache implements (for {@code
   * must-understand}): all of RFC 9110 §15 except 206 (partial responses are not stored) and 304.
   */
  static boolean understands(int status) {
    return switch (status) {
      case 200, 201, 202, 203, 204, 205, 300, 301, 302, 303, 307, 308 -> true;
      case 400,
          401,
          402,
          403,
          404,
          405,
          406,
          407,
          408,
          409,
          410,
          411,
          412,
          413,
          414,
          415,
          416,
          417,
          421,
          422,
          426 ->
          true;
      case 500, 501, 502, 503, 504, 505 -> true;
      default -> false;
    };
  }
}
