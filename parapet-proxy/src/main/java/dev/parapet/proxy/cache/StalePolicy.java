package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.HttpHeaders;
import java.time.Duration;

/**
 * May a stored response that is not fresh be served now? Two moments ask:
 *
 * <p><b>Before going to the origin</b> ({@link #beforeOrigin}), for a {@link Lookup.Kind#STALE}
 * result. Serving stale is never allowed when the response forbids it (RFC 9111 §4.2.4: {@code
 * must-revalidate}, {@code proxy-revalidate}, {@code s-maxage}, {@code no-cache}) or the request
 * asks for validation ({@code no-cache}, or a {@code max-age} / {@code min-fresh} the entry fails):
 * then {@link StaleDecision#REVALIDATE}. Otherwise, within the request's {@code max-stale} the
 * entry is served as is (§5.2.1.2); within {@code stale-while-revalidate} (the response's
 * directive, or {@code cache.stale_while_revalidate} when it has none; RFC 5861 §3) it is served
 * and refreshed in the background; beyond both the request waits for the origin — or, with the
 * request's {@code only-if-cached} (§5.2.1.7), gets 504 instead of ever reaching it.
 *
 * <p><b>After the origin failed</b> ({@link #onError}), or could not be tried: within {@code
 * stale-if-error} (the response's directive, or {@code cache.stale_if_error}; RFC 5861 §4) the
 * entry is served for every {@link StaleTrigger} — the seed's extension: timeouts, connect errors,
 * an open breaker, shedding and pool limits count as errors too. A response that forbids stale use
 * is never served: for a trigger where the origin answered (5xx) its answer is forwarded ({@link
 * StaleDecision#PASS_ERROR}); where it could not be reached, 504 ({@link
 * StaleDecision#GATEWAY_TIMEOUT}, §5.2.2.2). Too stale: {@link StaleDecision#PASS_ERROR}.
 *
 * <p>Directives in the response win over the configured defaults in both directions (an origin's
 * {@code stale-if-error=0} disables it for that response). Windows are measured from the end of
 * freshness. Immutable; safe to share.
 */
public final class StalePolicy {
  private final long staleWhileRevalidateNanos;
  private final long staleIfErrorNanos;

  /**
   * @param staleWhileRevalidate {@code cache.stale_while_revalidate} (60 s by default)
   * @param staleIfError {@code cache.stale_if_error} (300 s by default)
   */
  public StalePolicy(Duration staleWhileRevalidate, Duration staleIfError) {
    if (staleWhileRevalidate.isNegative() || staleIfError.isNegative()) {
      throw new IllegalArgumentException(
          "stale windows : " + staleWhileRevalidate + ", " + staleIfError + " (expected: >= 0)");
    }
    this.staleWhileRevalidateNanos = staleWhileRevalidate.toNanos();
    this.staleIfErrorNanos = staleIfError.toNanos();
  }

  /** The decision for a {@link Lookup.Kind#STALE} lookup before any origin attempt. */
  public StaleDecision beforeOrigin(Lookup lookup, HttpHeaders requestHeaders) {
    CachedResponse e = lookup.requireEntry();
    CacheControl req = CacheControl.of(requestHeaders);
    long age = lookup.currentAgeNanos();
    long remaining = e.lifetimeNanos() - age;
    if (e.cacheControl().forbidsStale()
        || req.noCache()
        || (req.maxAge() != CacheControl.ABSENT && age > Freshness.seconds(req.maxAge()))
        || (req.minFresh() != CacheControl.ABSENT
            && remaining < Freshness.seconds(req.minFresh()))) {
      // only-if-cached (§5.2.1.7): the client takes a stored response or 504, never the origin
      return req.onlyIfCached() ? StaleDecision.GATEWAY_TIMEOUT : StaleDecision.REVALIDATE;
    }
    long staleness = lookup.stalenessNanos();
    if (req.maxStale() != CacheControl.ABSENT && staleness <= Freshness.seconds(req.maxStale())) {
      return StaleDecision.SERVE_STALE;
    }
    if (staleness <= staleWhileRevalidateNanos(e)) {
      return StaleDecision.REVALIDATE_IN_BACKGROUND;
    }
    return req.onlyIfCached() ? StaleDecision.GATEWAY_TIMEOUT : StaleDecision.REVALIDATE;
  }

  /**
   * The decision once the origin failed or could not be tried.
   *
   * @param entry the stored response for this request
   * @param trigger what went wrong
   * @param nowNanos monotonic now
   */
  public StaleDecision onError(CachedResponse entry, StaleTrigger trigger, long nowNanos) {
    if (entry.cacheControl().forbidsStale()) {
      return trigger.originAnswered() ? StaleDecision.PASS_ERROR : StaleDecision.GATEWAY_TIMEOUT;
    }
    if (entry.stalenessNanos(nowNanos) <= staleIfErrorNanos(entry)) {
      return StaleDecision.SERVE_STALE;
    }
    return StaleDecision.PASS_ERROR;
  }

  /** The stale-while-revalidate window for this entry. */
  public long staleWhileRevalidateNanos(CachedResponse e) {
    long directive = e.cacheControl().staleWhileRevalidate();
    return directive == CacheControl.ABSENT
        ? staleWhileRevalidateNanos
        : Freshness.seconds(directive);
  }

  /** The stale-if-error window for this entry. */
  public long staleIfErrorNanos(CachedResponse e) {
    long directive = e.cacheControl().staleIfError();
    return directive == CacheControl.ABSENT ? staleIfErrorNanos : Freshness.seconds(directive);
  }
}
