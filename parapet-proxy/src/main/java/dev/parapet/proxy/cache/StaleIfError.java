package dev.parapet.proxy.cache;

import dev.parapet.proxy.http.ProxyError;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import org.jspecify.annotations.Nullable;

/**
 * RFC 5861 {@code stale-if-error} at the edge: when the origin fails (5xx, timeout, connect error)
 * or the proxy refuses to ask it (open breaker, shed, pool limit), a stored response is served
 * stale within the window its directives and the operator allow, marked {@code Cache-Status: ...;
 * detail="stale <trigger>"}; a response that must be revalidated gets 504 instead (RFC 9111
 * §5.2.2.2), never the stale copy.
 */
final class StaleIfError {
  private StaleIfError() {}

  /**
   * Request {@code c} failed before any byte reached its client ({@code response} is the proxy's
   * own answer for {@code error}): its flight fails with the error, and the client gets a stale
   * copy when allowed, a 504 when the stored response forbids stale use, else {@code response} as
   * without a cache (with {@code Cache-Status}). Unsafe methods and refreshes are never answered
   * stale; a request already answered (stale before a slow origin, among others) gets nothing more.
   */
  static void onError(
      CachingDownstream c, ProxyError error, String detail, FullHttpResponse response) {
    c.stopSlowTimer();
    CacheMode mode = c.mode;
    if (mode == CacheMode.GONE || mode == CacheMode.ANSWERED || mode == CacheMode.DETACHED) {
      if (mode == CacheMode.DETACHED) {
        c.tee = null;
        c.endFlight(null, FetchFailed.local(error, detail, null));
        c.mode = CacheMode.ANSWERED;
      }
      response.release();
      return;
    }
    FetchFailed failed = FetchFailed.local(error, detail, response);
    StaleTrigger trigger = failed.trigger;
    c.tee = null;
    c.endFlight(null, failed);
    FullHttpResponse instead =
        trigger == null || c.key == null || mode == CacheMode.BYPASS || mode == CacheMode.REFRESH
            ? null
            : answer(c, trigger, error, detail, -1, c.cs.ticker().read());
    if (instead != null) {
      response.release();
      c.answerEarly(instead);
    } else {
      c.mode = CacheMode.ANSWERED;
      CacheStatus.addTo(response.headers(), c.cs.status().fwd(c.fwd));
      c.delegate.error(error, detail, response);
    }
  }

  /**
   * Request {@code c}, forwarded, failed before any byte reached its client, and the proxy has not
   * built its own answer yet: when the cache answers instead (a stale copy, a fresh one stored
   * meanwhile, the 504 of a copy that must be revalidated), its flight fails with the error and the
   * client gets that answer; true then, and the proxy's answer is never built (on an open breaker
   * every stale answer would otherwise build and drop a problem+json response). False, with nothing
   * done, when the answer would be the proxy's own: {@link #onError} then has it.
   *
   * @param retryAfterSeconds the {@code Retry-After} the proxy's answer would carry, or -1
   */
  static boolean answerInstead(
      CachingDownstream c, ProxyError error, String detail, long retryAfterSeconds) {
    StaleTrigger trigger = StaleTrigger.of(error);
    if (c.mode != CacheMode.FORWARD || trigger == null || c.key == null) {
      return false;
    }
    FullHttpResponse instead = answer(c, trigger, error, detail, -1, c.cs.ticker().read());
    if (instead == null) {
      return false;
    }
    c.stopSlowTimer();
    c.tee = null;
    c.endFlight(null, FetchFailed.local(error, detail, retryAfterSeconds));
    c.answerEarly(instead);
    return true;
  }

  /**
   * The answer for request {@code c} when its origin could not give a fresh one: a stale copy, a
   * fresh one another request stored meanwhile, a 504 when the stored response must be revalidated,
   * or null (answer as without a cache).
   *
   * @param error the local error, or null when the origin answered {@code originStatus}
   */
  static @Nullable FullHttpResponse answer(
      CachingDownstream c,
      StaleTrigger trigger,
      @Nullable ProxyError error,
      String detail,
      int originStatus,
      long now) {
    CacheServices cs = c.cs;
    EdgeCache edge = cs.edge();
    HttpHeaders clientHeaders = c.clientHeaders();
    boolean head = c.head;
    CacheKey k = c.key;
    if (k == null) {
      return null;
    }
    CachedResponse e = c.stale();
    if (e == null) {
      Lookup l = edge.store().lookup(k, clientHeaders, now);
      e = l.entry();
      if (e != null && l.kind() == Lookup.Kind.FRESH) {
        // stored meanwhile (another request's fetch): a plain hit
        cs.count(EdgeCache.Status.HIT);
        c.decided(EdgeCache.Status.HIT);
        return StoredAnswers.fromEntry(
            cs, e, clientHeaders, head, now, cs.status().hit().ttl(l.ttlSeconds()), true);
      }
    }
    if (e == null) {
      return null;
    }
    StaleDecision d = edge.policy().onError(e, trigger, now);
    if (d == StaleDecision.SERVE_STALE) {
      cs.count(EdgeCache.Status.STALE);
      c.decided(EdgeCache.Status.STALE);
      CacheStatus s = cs.status();
      if (trigger == StaleTrigger.TIMEOUT || trigger.originAnswered()) {
        s.fwd(CacheStatus.Fwd.STALE); // the origin was asked
        if (originStatus > 0) {
          s.fwdStatus(originStatus);
        }
      } else if (trigger == StaleTrigger.CONNECT_ERROR) {
        s.fwd(CacheStatus.Fwd.STALE);
      } else {
        s.hit(); // breaker, shedding, pool limit: the origin was not asked
      }
      return StoredAnswers.fromEntry(
          cs,
          e,
          clientHeaders,
          head,
          now,
          s.ttl(e.ttlSeconds(now)).detail("stale " + trigger.detail()),
          true);
    }
    if (d == StaleDecision.GATEWAY_TIMEOUT && error != null) {
      // §5.2.2.2: must-revalidate and the origin unreachable: 504, never the stale response.
      FullHttpResponse r =
          cs.responses()
              .build(
                  c.alloc(), error, detail + "; the stored response must be revalidated", null, -1);
      r.setStatus(HttpResponseStatus.GATEWAY_TIMEOUT);
      CacheStatus.addTo(r.headers(), cs.status().fwd(CacheStatus.Fwd.STALE));
      return r;
    }
    return null;
  }
}
