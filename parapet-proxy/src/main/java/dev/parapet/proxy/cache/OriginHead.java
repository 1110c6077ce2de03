package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

/**
 * What {@link CachingDownstream} does with the origin's response head on a looked-up request (or a
 * background refresh, or a request answered stale before a slow origin): merge a 304 for its own
 * conditional (§4.3.4) — or, when the 304 names a representation it does not hold, drop the entry
 * and send the request again in full; update the stored entry from a HEAD (§4.3.5); answer a 5xx
 * with a stale copy when stale-if-error allows; start the {@link StoringTee} of a storable
 * response; and mark keys whose responses cannot be shared.
 */
final class OriginHead {
  private OriginHead() {}

  /**
   * The origin's head for a request the cache does not look up (an unsafe method, a body, no host):
   * a 2xx/3xx to an unsafe method invalidates what it names (RFC 9111 §4.4); passed on.
   */
  static void bypass(CachingDownstream c, HttpResponse response, @Nullable String proxyStatus) {
    int status = response.status().code();
    HttpHeaders h = response.headers();
    CacheKey k = c.key;
    if (k != null) {
      c.edge
          .store()
          .invalidateAfter(
              c.request.method(),
              k,
              status,
              h.get(HttpHeaderNames.LOCATION),
              h.get(HttpHeaderNames.CONTENT_LOCATION));
    }
    CacheStatus.addTo(h, c.cs.status().fwd(c.fwd).fwdStatus(status));
    CachedResponse.stripTags(h);
    c.delegate.head(response, proxyStatus);
  }

  /**
   * The origin's response head reaches {@code c} (looked up, a refresh, or detached): answered
   * instead, dropped (a refresh's merge, a 304 to send again), held by the tee into storage, or
   * passed on. A detached request records or merges and never answers: the client has its stale
   * copy.
   */
  static void pass(CachingDownstream c, HttpResponse response, @Nullable String proxyStatus) {
    boolean detached = c.mode == CacheMode.DETACHED;
    c.stopSlowTimer();
    StaleOnSlow.onHead(c, response);
    FullHttpResponse instead = decide(c, response, proxyStatus);
    if (detached) {
      ReferenceCountUtil.release(instead);
      if (c.tee == null) {
        ReferenceCountUtil.release(response);
      }
    } else if (instead != null) {
      ReferenceCountUtil.release(response);
      c.answerEarly(instead);
    } else if (c.mode == CacheMode.ANSWERED || c.mode == CacheMode.REFETCH) {
      // a refresh merged a 304, or a 304 we cannot use: nothing to pass on
      ReferenceCountUtil.release(response);
    } else if (c.tee == null) {
      CachedResponse.stripTags(response.headers());
      c.delegate.head(response, proxyStatus);
    }
  }

  /**
   * The origin's response head: an answer to write instead (a merged 304, a stale copy), or null to
   * forward it — with {@code Cache-Status} added, or teed and held when storable.
   */
  private static @Nullable FullHttpResponse decide(
      CachingDownstream c, HttpResponse response, @Nullable String proxyStatus) {
    long now = c.cs.ticker().read();
    int status = response.status().code();
    HttpHeaders headers = response.headers();
    CacheKey k = c.requireKey();
    boolean background = c.mode == CacheMode.REFRESH || c.mode == CacheMode.DETACHED;
    long wall = c.edge.wallMillis();
    CachedResponse e = c.stale();
    if (c.revalidating && status == 304 && e != null) {
      CachedResponse merged = e.withNotModified(headers, c.startNanos, now, wall, c.heuristic);
      if (merged != null) {
        c.edge.store().replace(k, e, merged);
        c.endFlight(merged, null);
        if (background) {
          c.mode = CacheMode.ANSWERED;
          return null;
        }
        c.cs.count(EdgeCache.Status.REVALIDATED);
        return StoredAnswers.fromEntry(
            c.cs,
            merged,
            c.clientHeaders(),
            c.head,
            now,
            c.cs.status().fwd(c.fwd).fwdStatus(304).ttl(merged.ttlSeconds(now)),
            true);
      }
      // §4.3.4: the 304 names another representation; the stored one is no longer trusted.
      // Waiters fetch for themselves; this request is sent again in full once the 304 is over.
      c.edge.store().invalidate(k);
      c.endFlight(null, FetchFailed.notShared("304 for another representation"));
      if (!background && c.resume != null) {
        c.mode = CacheMode.REFETCH;
        return null;
      }
      c.mode = CacheMode.ANSWERED; // a refresh: nothing to answer, the next request fetches in full
      return null;
    }
    if (c.head && e != null && status == 200 && !background) {
      updateFromHead(c, k, e, headers, now, wall);
    }
    StaleTrigger trigger = StaleTrigger.forStatus(status);
    if (trigger != null) {
      c.endFlight(null, new FetchFailed(trigger, null, "origin answered " + status, -1));
      FullHttpResponse r =
          background
              ? null
              : StaleIfError.answer(c, trigger, null, "origin answered " + status, status, now);
      if (r != null) {
        return r;
      }
    }
    CacheStatus s = c.cs.status().fwd(c.fwd).fwdStatus(status);
    Storability verdict =
        c.head
            ? Storability.METHOD
            : Storability.of(
                c.request.method(), c.clientHeaders(), status, headers, c.heuristic, wall);
    long declared = Recorder.declaredLength(headers);
    long max = c.edge.store().maxObjectBytes();
    if (trigger != null && !(verdict.isStorable() && declared <= max)) {
      // A 5xx the origin did not mark storable: forwarded; its key stays collapsed (an erroring
      // origin is the one that most needs its misses collapsed).
      c.countUnlessBackground(EdgeCache.Status.MISS);
      CacheStatus.addTo(headers, s);
      return null;
    }
    if (verdict.isStorable() && declared <= max) {
      Recorder r = new Recorder(status, headers.copy(), now, wall, max, declared);
      c.tee = new StoringTee(c, r, response, proxyStatus, s);
      c.edge.clearPass(k);
    } else {
      if (!c.head && !background && status != 206) {
        c.edge.markPass(k); // (a 206 answers a Range; the full response may well be shareable)
      }
      c.endFlight(null, FetchFailed.notShared("not shareable: " + verdict));
      CacheStatus.addTo(headers, s);
    }
    c.countUnlessBackground(EdgeCache.Status.MISS);
    return null;
  }

  /**
   * RFC 9111 §4.3.5: a 200 to a HEAD updates the stored GET response's fields when it describes the
   * same representation (validators and {@code Content-Length} agree), else the stored response is
   * no longer trusted and is dropped.
   */
  private static void updateFromHead(
      CachingDownstream c, CacheKey k, CachedResponse e, HttpHeaders headers, long now, long wall) {
    String length = headers.get(HttpHeaderNames.CONTENT_LENGTH);
    boolean same =
        Revalidation.validatorsMatch(e, headers)
            && (length == null
                || length.trim().equals(e.headers().get(HttpHeaderNames.CONTENT_LENGTH)));
    CachedResponse updated =
        same ? e.withNotModified(headers, c.startNanos, now, wall, c.heuristic) : null;
    if (updated != null) {
      c.edge.store().replace(k, e, updated);
    } else {
      c.edge.store().invalidate(k);
    }
  }
}
