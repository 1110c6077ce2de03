package dev.parapet.proxy.cache;

/** What {@link StalePolicy} lets the request path do with a stored response that is not fresh. */
public enum StaleDecision {
  /** Serve the stored response now (with its negative {@code ttl}); nothing else to do. */
  SERVE_STALE,
  /**
   * Serve the stored response now and refresh it in the background (RFC 5861 §3), as a {@code
   * RequestKind.STALE_REFRESH} request: the first thing admission sheds.
   */
  REVALIDATE_IN_BACKGROUND,
  /** Go to the origin (conditionally, with {@link Revalidation#addValidators}) and wait for it. */
  REVALIDATE,
  /**
   * Do not serve it: answer as if there were no cache — forward the origin's error response, or the
   * proxy's own error (503 + Retry-After for breaker / shed / pool limit, 502/504 otherwise).
   */
  PASS_ERROR,
  /**
   * Do not serve it, and the response forbids stale use ({@code must-revalidate}, {@code
   * proxy-revalidate}, {@code s-maxage}, {@code no-cache}) while the origin is unreachable: answer
   * 504 (RFC 9111 §5.2.2.2).
   */
  GATEWAY_TIMEOUT;

  /** True when the stored response is sent to the client. */
  public boolean servesStale() {
    return this == SERVE_STALE || this == REVALIDATE_IN_BACKGROUND;
  }
}
