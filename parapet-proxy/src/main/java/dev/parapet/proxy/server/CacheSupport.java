package dev.parapet.proxy.server;

import dev.parapet.core.admission.AdmissionListener;
import dev.parapet.core.admission.AdmissionTicket;
import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Decision;
import dev.parapet.core.breaker.Permit;
import dev.parapet.core.deadline.DeadlineHeader;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.proxy.cache.CacheControl;
import dev.parapet.proxy.cache.CacheKey;
import dev.parapet.proxy.cache.CacheStatus;
import dev.parapet.proxy.cache.CachedResponse;
import dev.parapet.proxy.cache.Collapser;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.cache.Lookup;
import dev.parapet.proxy.cache.Revalidation;
import dev.parapet.proxy.cache.StaleDecision;
import dev.parapet.proxy.cache.StaleTrigger;
import dev.parapet.proxy.cache.Storability;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginConnection;
import dev.parapet.proxy.upstream.OriginPool;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.Timeout;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The edge cache on the request path: one instance per client request on a caching route, created
 * by {@link #begin} after the route match and before breaker and admission, confined to the client
 * connection's event loop. {@link ClientConnection} calls it at five points and holds no cache
 * logic itself:
 *
 * <pre>
 *  begin ──FRESH────────────────────────► ANSWER  (hit; ttl; Age)       304 if the client's own
 *    │   ──STALE, max-stale / SWR ──────► ANSWER  (hit; ttl&lt;0)          conditional matches
 *    │        └─ SWR: BackgroundRefresh (lowest priority: gate, bound, breaker permit)
 *    │   ──MISS / must validate─► collapser.join ─LEADER/OVERFLOW─► FORWARD (+ If-None-Match …)
 *    │                                     └WAITER─► WAIT ─ flight ends ─► resume on own loop
 *  onOriginHead ─ 304 on validation ──► merge, answer from entry; origin body discarded
 *               ─ 5xx + stale allowed ─► answer stale (fwd=stale; detail="stale origin-5xx")
 *               ─ storable ──────────► Recorder tees the body (≤ max object) ─► store, wake waiters
 *  onOriginContent ─ tee, store on the last content
 *  onLocalError (breaker open, pool limit, timeout, connect error, before any byte reached the
 *               client) ─► stale (detail="stale breaker-open" …) | 504 (must-revalidate) | null
 *  abort / clientGone ─► the flight fails; its waiters fall back to stale, an error, or a fetch
 *               of their own
 * </pre>
 *
 * <p>Unsafe methods (POST, PUT, DELETE, PATCH …) are not looked up; a 2xx/3xx answer invalidates
 * the target and same-host {@code Location} / {@code Content-Location} (RFC 9111 §4.4). A stale
 * serve is a local answer: it records nothing on the breaker; the origin's own 5xx or failure still
 * counts as evidence where the exchange records it.
 */
final class CacheSupport {
  /** What the connection does after {@link #begin}. */
  enum Step {
    /** Go to the origin (breaker, pool, exchange as without a cache). */
    FORWARD,
    /** Write {@link #takeAnswer()} and do not go to the origin. */
    ANSWER,
    /** Another request is fetching: wait; {@link Resume} is called on this loop when it ends. */
    WAIT
  }

  /** How a waiting request continues, called on its own event loop. */
  interface Resume {
    /**
     * @param answer the response to write, or null: forward the request yourself (uncollapsed)
     */
    void resume(@Nullable FullHttpResponse answer);
  }

  private static final String CACHE_STATUS = "Cache-Status";

  private final ProxyContext px;
  private final EdgeCache edge;
  private final ChannelHandlerContext client;
  private final HttpRequest request;
  private final Route route;
  private final OriginPool pool;
  private final String originForm;
  private final @Nullable CacheKey key;
  private final boolean lookupFlow;
  private final boolean head;

  /** The client's headers: the request's own until it is forwarded, then a copy (see forward). */
  private HttpHeaders clientHeaders;

  private final long startNanos;
  private final long defaultTtlNanos;
  private final Resume resume;

  private Step step = Step.FORWARD;
  private @Nullable FullHttpResponse answer;
  private CacheStatus.Fwd fwd = CacheStatus.Fwd.MISS;
  private @Nullable CachedResponse stale;
  private boolean revalidating;
  private Collapser.@Nullable Ticket<CacheKey, CachedResponse> ticket;
  private Collapser.@Nullable Flight<CacheKey, CachedResponse> flight;
  private boolean cancelled;

  /** This request stopped waiting for the flight it joined (its own deadline came first). */
  private boolean abandoned;

  private @Nullable Recorder recorder;

  private CacheSupport(
      ProxyContext px,
      ChannelHandlerContext client,
      HttpRequest request,
      Route route,
      OriginPool pool,
      String originForm,
      @Nullable CacheKey key,
      boolean lookupFlow,
      Resume resume) {
    this.px = px;
    this.edge = px.cache;
    this.client = client;
    this.request = request;
    this.route = route;
    this.pool = pool;
    this.originForm = originForm;
    this.key = key;
    this.lookupFlow = lookupFlow;
    this.head = request.method().equals(HttpMethod.HEAD);
    this.clientHeaders = request.headers();
    this.startNanos = px.ticker.read();
    this.defaultTtlNanos = edge.defaultTtlNanos(route.id());
    this.resume = resume;
  }

  /**
   * Consults the cache for a routed request; null when the route does not cache.
   *
   * @param host the request's Host (or absolute-form authority), null when it has none
   * @param hasBody the request announces a body (then it is not looked up)
   * @param noCollapse the request already waited for another fetch that could not serve it
   * @param resume how the request continues if it has to wait
   */
  static @Nullable CacheSupport begin(
      ProxyContext px,
      ChannelHandlerContext client,
      HttpRequest req,
      Route route,
      OriginPool pool,
      @Nullable String host,
      String originForm,
      boolean hasBody,
      boolean noCollapse,
      Resume resume) {
    if (!px.cache.caches(route.id())) {
      return null;
    }
    CacheKey key = host == null || host.isBlank() ? null : CacheKey.of(host, originForm);
    boolean hasHost = key != null;
    boolean lookupMethod = CacheKey.isLookupMethod(req.method());
    boolean lookup = lookupMethod && hasHost && !hasBody;
    CacheSupport cs =
        new CacheSupport(px, client, req, route, pool, originForm, key, lookup, resume);
    if (!lookup) {
      cs.fwd = lookupMethod ? CacheStatus.Fwd.BYPASS : CacheStatus.Fwd.METHOD;
      cs.count(EdgeCache.Status.BYPASS);
      return cs;
    }
    cs.lookup(noCollapse);
    return cs;
  }

  Step step() {
    return step;
  }

  /** The response to write for {@link Step#ANSWER}; the caller owns it. */
  FullHttpResponse takeAnswer() {
    FullHttpResponse r = answer;
    if (r == null) {
      throw new IllegalStateException("step : " + step + " (expected: ANSWER)");
    }
    answer = null;
    return r;
  }

  // -------------------------------------------------------------------------------------------
  // Request time

  private void lookup(boolean noCollapse) {
    CacheKey k = requireKey();
    long now = startNanos;
    Lookup l = edge.store().lookup(k, request.headers(), now);
    switch (l.kind()) {
      case FRESH -> {
        CachedResponse e = l.requireEntry();
        answer(fromEntry(e, now, status().hit().ttl(l.ttlSeconds()), true), EdgeCache.Status.HIT);
      }
      case STALE -> {
        CachedResponse e = l.requireEntry();
        StaleDecision d = edge.policy().beforeOrigin(l, request.headers());
        switch (d) {
          case SERVE_STALE ->
              answer(
                  fromEntry(e, now, status().hit().ttl(l.ttlSeconds()), true),
                  EdgeCache.Status.STALE);
          case REVALIDATE_IN_BACKGROUND -> {
            answer(
                fromEntry(
                    e,
                    now,
                    status().hit().ttl(l.ttlSeconds()).detail("stale-while-revalidate"),
                    true),
                EdgeCache.Status.STALE);
            refreshInBackground(k, e, now);
          }
          case GATEWAY_TIMEOUT -> answer(onlyIfCached(), EdgeCache.Status.MISS);
          case REVALIDATE, PASS_ERROR -> {
            if (d == StaleDecision.REVALIDATE
                && px.incident.preferStale()
                && edge.policy().onError(e, StaleTrigger.INCIDENT, now)
                    == StaleDecision.SERVE_STALE) {
              // The incident runbook prefers stale: answer now, refresh behind it.
              answer(
                  fromEntry(
                      e, now, status().hit().ttl(l.ttlSeconds()).detail("stale incident"), true),
                  EdgeCache.Status.STALE);
              refreshInBackground(k, e, now);
              return;
            }
            stale = e;
            // RFC 9211 §2.2: "request" when a fresh response was there but the request's
            // directives (no-cache, max-age, min-fresh) did not allow its use.
            boolean freshButRefused = e.isFresh(now) && !e.cacheControl().noCache();
            fwd = freshButRefused ? CacheStatus.Fwd.REQUEST : CacheStatus.Fwd.STALE;
            forward(k, noCollapse);
          }
        }
      }
      case MISS -> {
        if (CacheControl.of(request.headers()).onlyIfCached()) {
          answer(onlyIfCached(), EdgeCache.Status.MISS);
        } else {
          fwd = CacheStatus.Fwd.MISS;
          forward(k, noCollapse);
        }
      }
    }
  }

  private void forward(CacheKey k, boolean noCollapse) {
    if (!head && !noCollapse && !edge.isPass(k)) {
      Collapser.Ticket<CacheKey, CachedResponse> t = edge.collapser().join(k, new Wait());
      ticket = t;
      switch (t.role()) {
        case LEADER -> flight = t.flight();
        case WAITER -> {
          step = Step.WAIT;
          return;
        }
        case OVERFLOW -> {
          // too many waiters on this key: go to the origin uncollapsed (breaker and pool bound it)
        }
      }
    }
    // The forwarded request is rewritten in place (validators here, Via and hop-by-hop fields by
    // the exchange): keep what the client sent, for the secondary key and its own conditionals.
    clientHeaders = request.headers().copy();
    CachedResponse e = stale;
    if (e != null) {
      // Our own conditional (§4.3.1); the client's conditionals are answered from the entry.
      revalidating = Revalidation.addValidators(e, request.headers());
    }
    step = Step.FORWARD;
  }

  private void answer(FullHttpResponse r, EdgeCache.Status s) {
    answer = r;
    step = Step.ANSWER;
    count(s);
  }

  /** 504 for {@code only-if-cached} with nothing usable (RFC 9111 §5.2.1.7). */
  private FullHttpResponse onlyIfCached() {
    FullHttpResponse r =
        px.responses.build(
            client.alloc(),
            ProxyError.RESPONSE_TIMEOUT,
            "only-if-cached and no usable stored response",
            null,
            -1,
            false);
    addStatus(r.headers(), status().fwd(fwd));
    return r;
  }

  /** A waiter's callbacks run on the thread that ended the flight: hop to our own loop. */
  private final class Wait implements Collapser.Waiter<CachedResponse> {
    @Override
    public void onSuccess(CachedResponse value) {
      hop(value, null);
    }

    @Override
    public void onFailure(Throwable cause) {
      hop(null, cause);
    }

    private void hop(@Nullable CachedResponse value, @Nullable Throwable cause) {
      try {
        client.executor().execute(() -> woken(value, cause));
      } catch (RejectedExecutionException e) {
        // the loop is shutting down: the client connection goes with it
      }
    }
  }

  private void woken(@Nullable CachedResponse value, @Nullable Throwable cause) {
    if (cancelled || abandoned || !client.channel().isActive()) {
      return;
    }
    long now = px.ticker.read();
    if (value != null && value.matchesVariant(clientHeaders)) {
      count(EdgeCache.Status.COLLAPSED);
      resume.resume(
          fromEntry(
              value,
              now,
              status().fwd(fwd).fwdStatus(value.status()).ttl(value.ttlSeconds(now)).collapsed(),
              true));
      return;
    }
    if (cause instanceof FetchFailed f && f.trigger != null) {
      FullHttpResponse r = onError(f.trigger, f.error, f.detail, -1, now);
      ProxyError error = f.error;
      if (r == null && error != null) {
        long retryAfter =
            error.status() == HttpResponseStatus.SERVICE_UNAVAILABLE ? px.retryAfterSeconds(0) : -1;
        r = px.responses.build(client.alloc(), error, f.detail, null, retryAfter, false);
        addStatus(r.headers(), status().fwd(fwd).collapsed());
      }
      if (r != null) {
        resume.resume(r);
        return;
      }
    }
    // Not shareable, another variant, the leader's client left, or the origin's own error
    // response: fetch for ourselves, uncollapsed.
    resume.resume(null);
  }

  // -------------------------------------------------------------------------------------------
  // The origin's answer

  /**
   * The origin's response head arrived for this request, before anything is written to the client.
   * Returns a response to write instead (the origin's response is then read and discarded), or null
   * to forward the origin's response — with {@code Cache-Status} added to {@code headers}.
   *
   * @param headers the response's headers, hop-by-hop fields removed, before this hop's Via
   */
  @Nullable FullHttpResponse onOriginHead(int status, HttpHeaders headers, long now) {
    CacheKey k = key;
    if (!lookupFlow) {
      if (k != null) {
        edge.store()
            .invalidateAfter(
                request.method(),
                k,
                status,
                headers.get(HttpHeaderNames.LOCATION),
                headers.get(HttpHeaderNames.CONTENT_LOCATION));
      }
      addStatus(headers, status().fwd(fwd).fwdStatus(status));
      return null;
    }
    k = requireKey();
    long wall = edge.wallMillis();
    CachedResponse e = stale;
    if (revalidating && status == 304 && e != null) {
      CachedResponse merged = e.withNotModified(headers, startNanos, now, wall, defaultTtlNanos);
      if (merged != null) {
        edge.store().replace(k, e, merged);
        endFlight(merged, null);
        count(EdgeCache.Status.REVALIDATED);
        return fromEntry(
            merged, now, status().fwd(fwd).fwdStatus(304).ttl(merged.ttlSeconds(now)), false);
      }
      // §4.3.4: the 304 names another representation; the stored one is no longer trusted.
      edge.store().invalidate(k);
      endFlight(null, new FetchFailed(null, null, "304 for another representation"));
      FullHttpResponse r =
          px.responses.build(
              client.alloc(),
              ProxyError.MALFORMED_RESPONSE,
              "origin answered 304 for a representation this cache does not hold",
              null,
              -1,
              false);
      addStatus(r.headers(), status().fwd(fwd).fwdStatus(304));
      return r;
    }
    StaleTrigger trigger = StaleTrigger.forStatus(status);
    if (trigger != null) {
      endFlight(null, new FetchFailed(trigger, null, "origin answered " + status));
      FullHttpResponse r = onError(trigger, null, "origin answered " + status, status, now);
      if (r != null) {
        return r;
      }
      count(EdgeCache.Status.MISS);
      addStatus(headers, status().fwd(fwd).fwdStatus(status));
      return null;
    }
    CacheStatus s = status().fwd(fwd).fwdStatus(status);
    Storability verdict =
        head
            ? Storability.METHOD
            : Storability.of(request.method(), clientHeaders, status, headers, defaultTtlNanos);
    long declared = declaredLength(headers);
    long max = edge.store().maxObjectBytes();
    if (verdict.isStorable() && declared <= max) {
      recorder = new Recorder(status, headers.copy(), now, wall, max, declared);
      s.stored();
      edge.clearPass(requireKey());
    } else {
      if (!head) {
        edge.markPass(requireKey());
      }
      endFlight(null, new FetchFailed(null, null, "not shareable: " + verdict));
    }
    count(EdgeCache.Status.MISS);
    addStatus(headers, s);
    return null;
  }

  /** A piece of the origin's body, before it is written to the client (which releases it). */
  void onOriginContent(HttpContent content, boolean last) {
    Recorder r = recorder;
    if (r == null) {
      return;
    }
    if (!r.add(content.content())) {
      recorder = null;
      endFlight(null, new FetchFailed(null, null, "larger than the largest object stored"));
      return;
    }
    if (last) {
      recorder = null;
      CachedResponse e = r.finish(clientHeaders, startNanos, defaultTtlNanos);
      if (edge.store().store(requireKey(), e)) {
        count(EdgeCache.Status.STORED);
        endFlight(e, null);
      } else {
        endFlight(null, new FetchFailed(null, null, "larger than the largest object stored"));
      }
    }
  }

  /**
   * The request failed before any byte reached the client: the response to write — a stale one, 504
   * when the stored response forbids stale use, or {@code error} as without a cache (with {@code
   * Cache-Status}).
   *
   * @param scope the breaker or pool the error is about, or null
   * @param retryAfterSeconds for a 503 without a stale response; negative for none
   * @param close the connection closes after the response
   */
  FullHttpResponse onLocalError(
      ProxyError error,
      String detail,
      @Nullable String scope,
      long retryAfterSeconds,
      boolean close,
      long now) {
    StaleTrigger trigger = trigger(error);
    recorder = null;
    endFlight(null, new FetchFailed(trigger, error, detail));
    FullHttpResponse r =
        trigger == null || !lookupFlow || cancelled
            ? null
            : onError(trigger, error, detail, -1, now);
    if (r == null) {
      r = px.responses.build(client.alloc(), error, detail, scope, retryAfterSeconds, close);
      addStatus(r.headers(), status().fwd(fwd));
    } else if (close) {
      r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
    return r;
  }

  /** The exchange failed (after the response head, or before: then {@link #onLocalError}). */
  void abort(ProxyError error, String detail) {
    recorder = null;
    endFlight(null, new FetchFailed(trigger(error), error, detail));
  }

  /**
   * A waiting request gives up on the flight it joined: its own deadline came before the leader's
   * answer. It leaves the flight (a wake already on its way does nothing) and is answered through
   * {@link #onLocalError}, with a stale copy when stale-if-error allows one.
   */
  void stopWaiting() {
    abandoned = true;
    Collapser.Ticket<CacheKey, CachedResponse> t = ticket;
    if (t != null && t.role() == Collapser.Role.WAITER) {
      t.cancel();
    }
  }

  /** The client connection closed. */
  void clientGone() {
    cancelled = true;
    recorder = null;
    Collapser.Ticket<CacheKey, CachedResponse> t = ticket;
    if (t != null && t.role() == Collapser.Role.WAITER) {
      t.cancel();
    }
    endFlight(null, new FetchFailed(null, null, "leader's client left"));
  }

  /** The stale-if-error answer for this request, if any. */
  private @Nullable FullHttpResponse onError(
      StaleTrigger trigger, @Nullable ProxyError error, String detail, int originStatus, long now) {
    CacheKey k = key;
    if (k == null || !lookupFlow) {
      return null;
    }
    CachedResponse e = stale;
    if (e == null) {
      Lookup l = edge.store().lookup(k, clientHeaders, now);
      e = l.entry();
      if (e != null && l.kind() == Lookup.Kind.FRESH) {
        // stored meanwhile (another request's fetch): a plain hit
        count(EdgeCache.Status.HIT);
        return fromEntry(e, now, status().hit().ttl(l.ttlSeconds()), true);
      }
    }
    if (e == null) {
      return null;
    }
    StaleDecision d = edge.policy().onError(e, trigger, now);
    if (d == StaleDecision.SERVE_STALE) {
      count(EdgeCache.Status.STALE);
      CacheStatus s = status();
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
      return fromEntry(e, now, s.ttl(e.ttlSeconds(now)).detail("stale " + trigger.detail()), true);
    }
    if (d == StaleDecision.GATEWAY_TIMEOUT && error != null) {
      // §5.2.2.2: must-revalidate and the origin unreachable: 504, never the stale response.
      FullHttpResponse r =
          px.responses.build(
              client.alloc(),
              error,
              detail + "; the stored response must be revalidated",
              null,
              -1,
              false);
      r.setStatus(HttpResponseStatus.GATEWAY_TIMEOUT);
      addStatus(r.headers(), status().fwd(CacheStatus.Fwd.STALE));
      return r;
    }
    return null;
  }

  /**
   * The stale-if-error trigger of a local error, or null when the error says nothing about the
   * origin's availability. Admission shedding maps to {@link StaleTrigger#SHED} once it exists.
   */
  static @Nullable StaleTrigger trigger(ProxyError error) {
    return switch (error) {
      case BREAKER_OPEN -> StaleTrigger.BREAKER_OPEN;
      case CONNECTION_LIMIT -> StaleTrigger.POOL_LIMIT;
      case SHED -> StaleTrigger.SHED;
      case CONNECT_TIMEOUT, CONNECTION_REFUSED, CONNECTION_TERMINATED, MALFORMED_RESPONSE ->
          StaleTrigger.CONNECT_ERROR;
      case RESPONSE_TIMEOUT, DEADLINE_TOO_SHORT -> StaleTrigger.TIMEOUT;
      default -> null;
    };
  }

  // -------------------------------------------------------------------------------------------
  // Pieces

  private void endFlight(@Nullable CachedResponse value, @Nullable Throwable cause) {
    Collapser.Flight<CacheKey, CachedResponse> f = flight;
    if (f == null) {
      return;
    }
    flight = null;
    if (value != null) {
      f.complete(value);
    } else {
      f.fail(cause == null ? new FetchFailed(null, null, "no response") : cause);
    }
  }

  private CacheKey requireKey() {
    CacheKey k = key;
    if (k == null) {
      throw new IllegalStateException("cache key : null (expected: a looked-up request)");
    }
    return k;
  }

  private CacheStatus status() {
    return CacheStatus.of(edge.name());
  }

  private void count(EdgeCache.Status s) {
    edge.count(s);
    px.metrics.cache(s.label());
  }

  private static void addStatus(HttpHeaders h, CacheStatus s) {
    h.set(CACHE_STATUS, CacheStatus.append(h.get(CACHE_STATUS), s));
  }

  /**
   * A response from a stored entry: the client's own conditional answered with 304 (§4.3.2), a HEAD
   * without content, {@code Age} (§5.1), {@code Cache-Status} after the upstream tiers' members,
   * this hop's {@code Via}.
   */
  private FullHttpResponse fromEntry(CachedResponse e, long now, CacheStatus s, boolean withAge) {
    boolean notModified =
        e.status() == 200 && Revalidation.clientNotModified(clientHeaders, e, edge.wallMillis());
    int code = e.status();
    boolean noBody = head || notModified || code == 204 || code == 304 || e.bodyLength() == 0;
    ByteBuf content = noBody ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(e.body());
    FullHttpResponse r =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            notModified ? HttpResponseStatus.NOT_MODIFIED : HttpResponseStatus.valueOf(code),
            content);
    HttpHeaders h = r.headers();
    h.set(e.headers());
    if (notModified) {
      h.remove(HttpHeaderNames.CONTENT_LENGTH);
      h.remove(HttpHeaderNames.CONTENT_TYPE);
    }
    if (withAge) {
      h.set(HttpHeaderNames.AGE, Long.toString(e.ageSeconds(now)));
    }
    addStatus(h, s);
    ForwardedHeaders.appendVia(h, px.viaMember);
    return r;
  }

  /** The declared Content-Length, or -1 (absent or invalid: the body is bounded as it comes). */
  private static long declaredLength(HttpHeaders h) {
    String v = h.get(HttpHeaderNames.CONTENT_LENGTH);
    if (v == null) {
      return -1;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** Why a flight ended without a response; stackless (a value on the hot path). */
  static final class FetchFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    final transient @Nullable StaleTrigger trigger;
    final transient @Nullable ProxyError error;
    final String detail;

    FetchFailed(@Nullable StaleTrigger trigger, @Nullable ProxyError error, String detail) {
      super(detail, null, false, false);
      this.trigger = trigger;
      this.error = error;
      this.detail = detail;
    }
  }

  /**
   * Copies a response body as it streams to the client (the client's write releases the buffers),
   * bounded by the largest object the store keeps.
   */
  private static final class Recorder {
    final int status;
    final HttpHeaders headers;
    final long responseNanos;
    final long responseWall;
    final long max;
    byte[] buf;
    int size;

    Recorder(
        int status,
        HttpHeaders headers,
        long responseNanos,
        long responseWall,
        long max,
        long declared) {
      this.status = status;
      this.headers = headers;
      this.responseNanos = responseNanos;
      this.responseWall = responseWall;
      this.max = max;
      this.buf = new byte[(int) Math.min(max, declared >= 0 ? declared : 8192)];
    }

    /** False when the body grows beyond {@code max}. */
    boolean add(ByteBuf b) {
      int n = b.readableBytes();
      if (size + (long) n > max) {
        buf = new byte[0];
        return false;
      }
      if (size + n > buf.length) {
        buf = Arrays.copyOf(buf, (int) Math.min(max, Math.max(size + n, buf.length * 2L)));
      }
      b.getBytes(b.readerIndex(), buf, size, n);
      size += n;
      return true;
    }

    CachedResponse finish(HttpHeaders requestHeaders, long requestNanos, long defaultTtlNanos) {
      byte[] body = size == buf.length ? buf : Arrays.copyOf(buf, size);
      return CachedResponse.of(
          status,
          headers,
          body,
          requestHeaders,
          requestNanos,
          responseNanos,
          responseWall,
          defaultTtlNanos);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Background refresh (stale-while-revalidate)

  private void refreshInBackground(CacheKey k, CachedResponse e, long now) {
    Collapser<CacheKey, CachedResponse> c = edge.collapser();
    if (c.inFlight(k) || !edge.tryStartBackground()) {
      count(EdgeCache.Status.REFRESH_SKIPPED);
      return;
    }
    Collapser.Ticket<CacheKey, CachedResponse> t = c.join(k, NO_WAITER);
    if (t.role() != Collapser.Role.LEADER) {
      t.cancel();
      edge.backgroundDone();
      count(EdgeCache.Status.REFRESH_SKIPPED);
      return;
    }
    new BackgroundRefresh(this, k, e, t.flight()).start(now);
  }

  private static final Collapser.Waiter<CachedResponse> NO_WAITER =
      new Collapser.Waiter<>() {
        @Override
        public void onSuccess(CachedResponse value) {}

        @Override
        public void onFailure(Throwable cause) {}
      };

  /**
   * An origin fetch without a client: a conditional GET for a stale entry, under the route's
   * breaker (a refused permit skips it), within the origin's timeout, its body aggregated up to the
   * largest object stored. It leads the key's flight, so requests that must validate the same entry
   * meanwhile wait for it instead of fetching again. Runs on the event loop of the request that
   * started it.
   */
  private static final class BackgroundRefresh
      implements HostPool.Acquirer, OriginConnection.Listener, AdmissionListener {
    final ProxyContext px;
    final EdgeCache edge;
    final Route route;
    final OriginPool pool;
    final CacheKey key;
    final CachedResponse entry;
    final HttpHeaders requestHeaders;
    final String originForm;
    final Collapser.Flight<CacheKey, CachedResponse> flight;
    final EventLoop loop;
    final long defaultTtlNanos;
    final Permit permit = new Permit();

    /** Background work is admitted at the lowest class, so it is the first thing shed. */
    final AdmissionTicket ticket = new AdmissionTicket(this);

    @Nullable HostPool host;
    @Nullable CircuitBreaker breaker;
    @Nullable Channel origin;
    @Nullable Timeout timer;
    @Nullable Recorder recorder;
    @Nullable CachedResponse result;
    @Nullable StaleTrigger failure;
    Outcome outcome = Outcome.SUCCESS;
    boolean keepAlive;
    long sentNanos;
    boolean done;

    BackgroundRefresh(
        CacheSupport request,
        CacheKey key,
        CachedResponse entry,
        Collapser.Flight<CacheKey, CachedResponse> flight) {
      this.px = request.px;
      this.edge = request.edge;
      this.route = request.route;
      this.pool = request.pool;
      this.key = key;
      this.entry = entry;
      this.requestHeaders = request.clientHeaders.copy();
      this.originForm = request.originForm;
      this.flight = flight;
      this.loop = request.client.channel().eventLoop();
      this.defaultTtlNanos = request.defaultTtlNanos;
    }

    void start(long now) {
      switch (px.admission.offer(ticket, 4, RequestKind.STALE_REFRESH, now)) {
        case ADMITTED -> go(now);
        case QUEUED -> {} // the listener hears, exactly once
        case REJECTED -> shed(ticket.rejectReason());
      }
    }

    @Override
    public void onAdmitted(AdmissionTicket t, long nowNanos) {
      loop.execute(() -> go(px.ticker.read()));
    }

    @Override
    public void onRejected(AdmissionTicket t, RejectReason reason, long nowNanos) {
      loop.execute(() -> shed(reason));
    }

    private void shed(@Nullable RejectReason reason) {
      px.metrics.count(
          "parapet.shed",
          "priority",
          "4",
          "reason",
          (reason == null ? RejectReason.LIMIT_REACHED : reason).name().toLowerCase(Locale.ROOT));
      skipped();
    }

    private void go(long now) {
      if (done) {
        ticket.permit().onIgnore(now);
        return;
      }
      if (!pool.tryStartRequest()) {
        skipped();
        return;
      }
      long hashKey = pool.hashKey(originForm, null);
      HostPool h = pool.pick(hashKey);
      CircuitBreaker b = px.breaker(route, pool, h, pool.shardOf(hashKey), now);
      Decision d = b.tryAcquire(permit.requestId(px.requestIds.incrementAndGet()), now);
      if (!d.isPermitted()) {
        pool.finishRequest();
        skipped();
        return;
      }
      host = h;
      breaker = b;
      edge.count(EdgeCache.Status.REFRESH);
      px.metrics.cache(EdgeCache.Status.REFRESH.label());
      timer =
          px.timeouts.newTimeout(
              t -> loop.execute(this::onTimeout),
              pool.settings().timeout().toNanos(),
              TimeUnit.NANOSECONDS);
      h.acquire(loop, this);
    }

    private void skipped() {
      done = true;
      if (ticket.permit().isActive()) {
        ticket.permit().onIgnore(px.ticker.read());
      }
      edge.backgroundDone();
      edge.count(EdgeCache.Status.REFRESH_SKIPPED);
      px.metrics.cache(EdgeCache.Status.REFRESH_SKIPPED.label());
      flight.fail(new FetchFailed(null, null, "background refresh skipped"));
    }

    @Override
    public boolean isCancelled() {
      return done;
    }

    @Override
    public void onConnection(Channel ch) {
      HostPool h = host;
      if (done || h == null) {
        if (h != null) {
          h.release(ch, true);
        }
        return;
      }
      origin = ch;
      OriginConnection.of(ch).attach(this);
      ch.config().setAutoRead(true);
      DefaultFullHttpRequest r =
          new DefaultFullHttpRequest(
              HttpVersion.HTTP_1_1, HttpMethod.GET, originForm, Unpooled.EMPTY_BUFFER);
      HttpHeaders out = r.headers();
      out.set(requestHeaders);
      ForwardedHeaders.stripHopByHop(out);
      out.remove(HttpHeaderNames.CONTENT_LENGTH);
      out.remove(HttpHeaderNames.EXPECT);
      out.remove(HttpHeaderNames.CACHE_CONTROL); // the client's directives were for its request
      Revalidation.addValidators(entry, out);
      ForwardedHeaders.appendVia(out, px.viaMember);
      out.set(DeadlineHeader.NAME, DeadlineHeader.format(pool.settings().timeout().toNanos()));
      sentNanos = px.ticker.read();
      ch.writeAndFlush(r);
    }

    @Override
    public void onConnectFailure(Throwable cause) {
      failure = StaleTrigger.CONNECT_ERROR;
      finish(Outcome.CONNECT_FAILURE, false);
    }

    @Override
    public void onLimitReached() {
      failure = StaleTrigger.POOL_LIMIT;
      finish(null, false);
    }

    @Override
    public void onOriginMessage(HttpObject msg) {
      try {
        if (done) {
          return;
        }
        if (msg instanceof HttpResponse resp) {
          if (resp.decoderResult().isFailure()) {
            failure = StaleTrigger.CONNECT_ERROR;
            finish(Outcome.MALFORMED_RESPONSE, false);
            return;
          }
          if (resp.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
            return;
          }
          onHead(resp);
        }
        if (msg instanceof HttpContent c) {
          if (c.decoderResult().isFailure()) {
            failure = StaleTrigger.CONNECT_ERROR;
            finish(Outcome.MALFORMED_RESPONSE, false);
            return;
          }
          Recorder r = recorder;
          if (r != null && !r.add(c.content())) {
            recorder = null;
          }
          if (c instanceof LastHttpContent) {
            if (r != null && recorder != null) {
              CachedResponse e = r.finish(requestHeaders, sentNanos, defaultTtlNanos);
              if (edge.store().store(key, e)) {
                result = e;
                edge.count(EdgeCache.Status.STORED);
                px.metrics.cache(EdgeCache.Status.STORED.label());
              }
            }
            finish(outcome, keepAlive);
          }
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    private void onHead(HttpResponse resp) {
      long now = px.ticker.read();
      int code = resp.status().code();
      outcome = pool.settings().classifier().classifyResponse(code, now - sentNanos, now);
      pool.settings().latency().record(now - sentNanos, now);
      keepAlive = HttpUtil.isKeepAlive(resp);
      HttpHeaders h = resp.headers().copy();
      ForwardedHeaders.stripHopByHop(h);
      long wall = edge.wallMillis();
      if (code == 304) {
        CachedResponse merged = entry.withNotModified(h, sentNanos, now, wall, defaultTtlNanos);
        if (merged != null) {
          edge.store().replace(key, entry, merged);
          result = merged;
        } else {
          edge.store().invalidate(key);
        }
        return;
      }
      StaleTrigger t = StaleTrigger.forStatus(code);
      if (t != null) {
        failure = t; // the stale entry stays: stale-if-error may still serve it
        return;
      }
      long declared = HttpUtil.getContentLength(resp, -1L);
      long max = edge.store().maxObjectBytes();
      if (Storability.of(HttpMethod.GET, requestHeaders, code, h, defaultTtlNanos).isStorable()
          && declared <= max) {
        recorder = new Recorder(code, h, now, wall, max, declared);
      }
    }

    @Override
    public void onOriginClosed() {
      failure = StaleTrigger.CONNECT_ERROR;
      finish(Outcome.CONNECT_FAILURE, false);
    }

    @Override
    public void onOriginException(Throwable cause) {
      failure = StaleTrigger.CONNECT_ERROR;
      finish(Outcome.CONNECT_FAILURE, false);
    }

    @Override
    public void onOriginWritabilityChanged(boolean writable) {
      // the request has no body
    }

    private void onTimeout() {
      timer = null;
      failure = StaleTrigger.TIMEOUT;
      finish(origin == null ? null : Outcome.TIMEOUT, false);
    }

    /** Ends the refresh once: evidence, connection, slots, and the flight. */
    private void finish(@Nullable Outcome o, boolean reusable) {
      if (done) {
        return;
      }
      done = true;
      Timeout t = timer;
      if (t != null) {
        t.cancel();
        timer = null;
      }
      long now = px.ticker.read();
      CircuitBreaker b = breaker;
      if (o != null && b != null) {
        if (o.kind() == Outcome.Kind.FAILURE || o.kind() == Outcome.Kind.SLOW) {
          px.metrics.failureSeen(b.key(), now);
        }
        permit.onOutcome(o, now);
        HostPool picked = host;
        if (picked != null) {
          pool.onAttemptOutcome(picked, o, sentNanos == 0 ? -1 : now - sentNanos, now);
        }
        px.metrics.attempt(pool.name(), o);
      } else {
        permit.release(now);
      }
      if (ticket.permit().isActive()) {
        if (o != null && o.kind() == Outcome.Kind.SUCCESS) {
          ticket.permit().onSuccess(now);
        } else {
          ticket.permit().onIgnore(now); // origin trouble is the breaker's business
        }
      }
      Channel ch = origin;
      HostPool h = host;
      if (ch != null && h != null) {
        OriginConnection.of(ch).detach();
        h.release(ch, reusable);
      }
      pool.finishRequest();
      edge.backgroundDone();
      CachedResponse r = result;
      if (r != null) {
        flight.complete(r);
      } else {
        flight.fail(new FetchFailed(failure, null, "background refresh failed"));
      }
    }
  }
}
