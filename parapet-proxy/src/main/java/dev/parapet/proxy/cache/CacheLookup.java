package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.HttpHeaders;
import org.jspecify.annotations.Nullable;

/**
 * The cache's decision for a request about to go to the origin (RFC 9111 §4): a fresh hit, a stale
 * copy its own directives or stale-while-revalidate allow (refreshed behind the answer), the 504 of
 * {@code only-if-cached}, or on to the origin — joining the key's collapsed fetch, and validating
 * the stored entry when there is one.
 */
final class CacheLookup {
  private final CachingDownstream c;
  private final CacheServices cs;
  private final EdgeCache edge;

  CacheLookup(CachingDownstream c) {
    this.c = c;
    this.cs = c.cs;
    this.edge = cs.edge();
  }

  void run(boolean noCollapse) {
    CacheKey k = c.requireKey();
    long now = c.startNanos;
    HttpHeaders headers = c.request.headers();
    Lookup l = edge.store().lookup(k, headers, now);
    switch (l.kind()) {
      case FRESH -> serve(l, null, EdgeCache.Status.HIT, null);
      case STALE -> stale(k, l, headers, now, noCollapse);
      case MISS -> {
        if (CacheControl.of(headers).onlyIfCached()) {
          onlyIfCached();
        } else {
          c.forward(k, noCollapse);
        }
      }
    }
  }

  private void stale(CacheKey k, Lookup l, HttpHeaders headers, long now, boolean noCollapse) {
    CachedResponse e = l.requireEntry();
    StaleDecision d = edge.policy().beforeOrigin(l, headers);
    switch (d) {
      case SERVE_STALE -> serve(l, null, EdgeCache.Status.STALE, null);
      case REVALIDATE_IN_BACKGROUND ->
          serve(l, "stale-while-revalidate", EdgeCache.Status.STALE, refresh(k, e, headers));
      case GATEWAY_TIMEOUT -> onlyIfCached();
      case REVALIDATE, PASS_ERROR -> {
        if (d == StaleDecision.REVALIDATE
            && cs.preferStale().getAsBoolean()
            && edge.policy().onError(e, StaleTrigger.INCIDENT, now) == StaleDecision.SERVE_STALE) {
          // The incident runbook prefers stale: answer now, refresh behind it.
          serve(l, "stale incident", EdgeCache.Status.STALE, refresh(k, e, headers));
          return;
        }
        // RFC 9211 §2.2: "request" when a fresh response was there but the request's directives
        // (no-cache, max-age, min-fresh) did not allow its use.
        boolean freshButRefused = e.isFresh(now) && !e.cacheControl().noCache();
        c.validates(e, freshButRefused ? CacheStatus.Fwd.REQUEST : CacheStatus.Fwd.STALE);
        c.forward(k, noCollapse);
      }
    }
  }

  /** Answers from the stored entry of {@code l} ({@code hit}, with {@code detail} when given). */
  private void serve(
      Lookup l, @Nullable String detail, EdgeCache.Status counted, @Nullable Refresh behind) {
    CacheStatus s = cs.status().hit().ttl(l.ttlSeconds());
    if (detail != null) {
      s.detail(detail);
    }
    c.answerWith(
        StoredAnswers.fromEntry(
            cs, l.requireEntry(), c.request.headers(), c.head, c.startNanos, s, true),
        counted,
        behind);
  }

  /** 504: the request allows only a cached answer and there is none it may use. */
  private void onlyIfCached() {
    c.answerWith(
        StoredAnswers.onlyIfCached(cs, c.alloc(), cs.status().fwd(c.fwd())),
        EdgeCache.Status.MISS,
        null);
  }

  /**
   * Leads the key's flight for a refresh behind the answer; null (counted as skipped) when a fetch
   * of the key is already under way or background work is at its bound.
   */
  private @Nullable Refresh refresh(CacheKey k, CachedResponse e, HttpHeaders headers) {
    Collapser<CacheKey, CachedResponse> collapser = edge.collapser();
    if (collapser.inFlight(k) || !edge.tryStartBackground()) {
      cs.count(EdgeCache.Status.REFRESH_SKIPPED);
      return null;
    }
    Collapser.Ticket<CacheKey, CachedResponse> t = collapser.join(k, CollapsedWait.NOBODY);
    if (t.role() != Collapser.Role.LEADER) {
      t.cancel();
      edge.backgroundDone();
      cs.count(EdgeCache.Status.REFRESH_SKIPPED);
      return null;
    }
    return new Refresh(k, e, headers.copy(), t.flight(), c.routeId, c.originForm);
  }
}
