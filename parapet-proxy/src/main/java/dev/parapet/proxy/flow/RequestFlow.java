package dev.parapet.proxy.flow;

import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.deadline.Deadline;
import dev.parapet.core.deadline.DeadlineHeader;
import dev.parapet.core.deadline.DeadlinePolicy;
import dev.parapet.core.exchange.ExchangePhase;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.retry.UpstreamCapacity;
import dev.parapet.proxy.cache.CachingDownstream;
import dev.parapet.proxy.cache.Refresh;
import dev.parapet.proxy.http.Downstream;
import dev.parapet.proxy.http.ForwardedHeaders;
import dev.parapet.proxy.http.ProxyError;
import dev.parapet.proxy.http.RequestBodies;
import dev.parapet.proxy.http1.HeaderList;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.upstream.OriginPool;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.opentelemetry.api.trace.Span;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One request through the proxy, top to bottom, as DESIGN.md draws the path:
 *
 * <pre>
 *  head ─► valid? ─► route ─► cache ─────────► deadline ─► client limit ─► exchange
 *           │400     │404      │hit, stale      │504        │429           │ origin gate: host,
 *           │413 508           │wait for another                           │ breaker, fallback;
 *                              │request's fetch (own timer: stale or 504)  │ admission; deadline;
 *                              ▼                                           │ attempts
 *                           resume: answered, or look up again and go on   │ (Exchange)
 * </pre>
 *
 * Whatever the protocol, the request answers into a {@link Downstream}: the connection's own, or
 * the edge cache's decorator around it, which records the origin's response or answers with a stale
 * copy. The request's budget is fixed when its head arrives — min(route timeout, incoming {@code
 * Parapet-Deadline}) from its start — and only shrinks: a request that waited for another's fetch
 * keeps its start and budget when it goes on. A stale-while-revalidate refresh runs the same flow
 * in the background ({@link #refresh}), answering into a downstream nobody reads.
 *
 * <p>Confined to the downstream's event loop.
 */
public final class RequestFlow implements CachingDownstream.Resume {
  /** The load hint on a shed, for the calling tier's retry logic and balancers. */
  public static final String CAPACITY_HEADER = "Parapet-Capacity";

  private static final AsciiString DEADLINE = HeaderList.token(DeadlineHeader.NAME);

  /** Where a request goes until its target is read. */
  private static final RequestTarget UNPARSED = new RequestTarget(null, "/", "/");

  /** Where the request is, as the client sees it. */
  private enum State {
    /** Its head is being looked at. */
    NEW,
    /** It waits for another request's fetch of the same object. */
    WAITING,
    /** It went on towards the origin (its exchange may be queued for admission). */
    FORWARDING,
    /** The client has its answer (or its reset); an exchange may still finish at the origin. */
    ANSWERED
  }

  final ProxyContext px;
  private final Downstream client;
  private final Client from;
  private final HttpRequest request;
  private final RequestRecord record;
  private final boolean background;
  private Downstream down;
  private State state = State.NEW;
  private RequestTarget where = UNPARSED;
  private @Nullable Route route;
  private @Nullable OriginPool pool;
  private long expiresAtNanos;
  private int priority;
  private boolean hasBody;
  private long bodyBytes;
  private @Nullable CachingDownstream cache;
  private @Nullable Exchange exchange;
  private @Nullable ScheduledFuture<?> waitTimer;

  /** The per-client limit this request holds a slot in, or null. */
  private @Nullable ClientLimits clientSlot;

  private RequestFlow(
      ProxyContext px,
      Downstream client,
      Client from,
      HttpRequest request,
      long startNanos,
      boolean background) {
    this.px = px;
    this.client = client;
    this.down = client;
    this.from = from;
    this.request = request;
    this.record = new RequestRecord(px, from, request, startNanos, background);
    this.background = background;
  }

  /** Runs a client's request that just arrived; what it answers goes to {@code client}. */
  public static RequestFlow start(
      ProxyContext px, Downstream client, Client from, HttpRequest request) {
    RequestFlow f = new RequestFlow(px, client, from, request, px.ticker.read(), false);
    f.run();
    return f;
  }

  // ---------------------------------------------------------------------------------------------
  // The path

  private void run() {
    RequestChecks.Refusal refused = RequestChecks.refusal(request, px.settings);
    if (refused != null) {
      fail(refused.error(), refused.detail());
      return;
    }
    hasBody = RequestBodies.hasBody(request);
    RequestTarget t = RequestTarget.of(request, record.target());
    if (t == null) {
      fail(
          ProxyError.BAD_REQUEST,
          "request target : '"
              + RequestChecks.clip(record.target())
              + "' (expected: "
              + RequestTarget.expected(record.target())
              + ")");
      return;
    }
    where = t;
    if (!from.trustedBy(px.trustedPeers)) {
      // Before anything reads them: the deadline and priority below, the cache's Vary, the origin.
      ForwardedHeaders.stripInternalSignals(request.headers(), px.priorities.header());
    }
    record.identify(request);
    record.startSpan(request, t.path());
    Route r = px.routes.match(t.host(), t.path());
    if (r == null) {
      fail(ProxyError.NO_ROUTE, "no route for this host and path");
      return;
    }
    route = r;
    px.metrics.routeEntered(r.id()); // left in answered()
    OriginPool p = px.origins.get(r.origin());
    if (p == null) {
      fail(ProxyError.NO_ROUTE, "route has no origin pool", r.id(), -1, null);
      return;
    }
    pool = p;
    long incoming = DeadlineHeader.parseNanos(request.headers().get(DEADLINE));
    expiresAtNanos =
        Deadline.expiresAt(
            DeadlinePolicy.requestBudgetNanos(r.timeout().toNanos(), incoming),
            record.startNanos());
    priority = px.priorities.classOf(r.priority(), request.headers().get(px.priorities.header()));
    if (!consultCache(false, record.startNanos())) {
      proceed(record.startNanos());
    }
  }

  /**
   * The edge cache, for a route that caches: true when the request needs nothing more now —
   * answered from the cache, or waiting for another request's fetch of the same object.
   */
  private boolean consultCache(boolean noCollapse, long now) {
    Route r = route();
    if (!px.cache.caches(r.id())) {
      return false;
    }
    OriginPool.StaleWait auto =
        px.cache.staleOnSlow(r.id()) == null ? pool().staleWait(r.id()) : null;
    CachingDownstream c =
        CachingDownstream.lookup(
            px.cacheServices,
            client,
            request,
            r.id(),
            where.host(),
            where.originForm(),
            from.secure(),
            hasBody,
            noCollapse,
            this,
            auto == null
                ? null
                : new CachingDownstream.OriginWait(
                    auto.latency(), auto.waiting(), r.timeout().toNanos()));
    cache = c;
    return switch (c.step()) {
      case ANSWER -> {
        Refresh refresh = c.takeRefresh();
        answer(c.takeAnswer());
        if (refresh != null) {
          refresh(px, client, r, pool(), refresh);
        }
        yield true;
      }
      case WAIT -> {
        state = State.WAITING;
        long usable = px.deadlines.usableNanos(expiresAtNanos, now);
        waitTimer =
            client
                .eventLoop()
                .schedule(this::waitedTooLong, Math.max(1, usable), TimeUnit.NANOSECONDS);
        yield true;
      }
      case FORWARD -> {
        down = c;
        yield false;
      }
    };
  }

  /** Towards the origin: deadline, the client's own limit, then the exchange. */
  private void proceed(long now) {
    state = State.FORWARDING;
    if (px.deadlines.isExhausted(expiresAtNanos, now)) {
      fail(
          ProxyError.DEADLINE_TOO_SHORT,
          "remaining deadline "
              + Math.max(0, px.deadlines.usableNanos(expiresAtNanos, now) / 1_000_000)
              + "ms is below min_useful",
          route().id(),
          -1,
          null);
      return;
    }
    px.syncOverload(now);
    ClientLimits limits = px.clientLimits;
    if (!background && limits.enabled()) {
      if (!limits.tryAcquire(from.address())) {
        fail(
            ProxyError.CLIENT_LIMIT,
            "this client already has " + limits.max() + " requests in flight",
            px.settings.name(),
            px.retryAfterSeconds(0),
            null);
        return;
      }
      clientSlot = limits;
    }
    OutboundRequest out =
        new OutboundRequest(
            request,
            where.originForm(),
            OutboundRequest.replayable(request, hasBody, route().retryNonIdempotent()),
            from,
            px.viaMember(request.protocolVersion()));
    Exchange ex =
        new Exchange(
            this, out, priority, background ? RequestKind.STALE_REFRESH : RequestKind.ORDINARY);
    exchange = ex;
    ex.begin(now);
  }

  // ---------------------------------------------------------------------------------------------
  // Waiting for another request's fetch

  /** The fetch this request waited for ended (on this loop): answered, or look up again. */
  @Override
  public void resume(@Nullable FullHttpResponse answer) {
    if (state != State.WAITING) {
      ReferenceCountUtil.release(answer);
      return;
    }
    cancelWaitTimer();
    if (answer != null) {
      answer(answer);
    } else if (!consultCache(true, px.ticker.read())) {
      proceed(px.ticker.read()); // its own fetch, within what is left of its own budget
    }
  }

  /**
   * The origin answered the cache's conditional request with a 304 for a representation the cache
   * does not hold (the entry is gone now): the request goes to the origin again as the client sent
   * it, within what is left of its budget. The first exchange was logged and counted as the origin
   * exchange it was.
   */
  @Override
  public void refetch(HttpHeaders clientHeaders) {
    if (state != State.ANSWERED || background) {
      return;
    }
    exchange = null;
    down = client;
    request.headers().set(clientHeaders);
    long now = px.ticker.read();
    if (!consultCache(true, now)) {
      proceed(now);
    }
  }

  /** This request's own budget ended before the fetch it waits for: stale, else 504. */
  private void waitedTooLong() {
    waitTimer = null;
    CachingDownstream c = cache;
    if (state != State.WAITING || c == null) {
      return;
    }
    c.stopWaiting();
    down = c; // its answer to an error is a stale copy when stale-if-error allows one
    fail(
        ProxyError.RESPONSE_TIMEOUT,
        "deadline reached while waiting for another request's fetch of this object",
        route().id(),
        -1,
        null);
  }

  private void cancelWaitTimer() {
    ScheduledFuture<?> t = waitTimer;
    if (t != null) {
      waitTimer = null;
      t.cancel(false);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // From the client's side

  /** A piece of the request's body, in order, up to its last content. */
  public void onRequestContent(HttpContent c) {
    Exchange ex = exchange;
    if (ex == null || state != State.FORWARDING) {
      ReferenceCountUtil.release(c);
      return;
    }
    if (c.decoderResult().isFailure()) {
      // The body lost its framing (a chunk size that is not one): what arrived must not reach the
      // origin as a whole request. Local, not evidence.
      String detail = RequestChecks.describe(c.decoderResult().cause());
      ReferenceCountUtil.release(c);
      abandon(ex, ProxyError.BAD_REQUEST, detail);
      return;
    }
    bodyBytes += c.content().readableBytes();
    if (bodyBytes > px.settings.maxBodyBytes()) {
      ReferenceCountUtil.release(c);
      abandon(
          ex,
          ProxyError.BODY_TOO_LARGE,
          "request body over " + px.settings.maxBodyBytes() + " bytes");
      return;
    }
    ex.onRequestContent(c);
  }

  private void abandon(Exchange ex, ProxyError error, String detail) {
    boolean headOut = ex.phase() == ExchangePhase.ANSWERING;
    ex.abandon(px.ticker.read());
    if (headOut) {
      forwarded(Outcome.LOCAL_REJECTION, ex.responseStatus(), error, px.ticker.read());
      down.reset(error, detail);
    } else {
      fail(error, detail);
    }
  }

  /** The client's writability changed. */
  public void onWritabilityChanged(boolean writable) {
    Exchange ex = exchange;
    if (ex != null) {
      ex.clientWritable(writable);
    }
  }

  /** The client went away before its answer was complete. */
  public void onClientGone() {
    long now = px.ticker.read();
    cancelWaitTimer();
    Exchange ex = exchange;
    if (state == State.FORWARDING && ex != null && !ex.phase().isOver()) {
      ex.clientGone(now);
      px.metrics.requestForwarded(
          route().id(), Outcome.CLIENT_CANCELLED, now - record.startNanos());
      log(AccessLog.CLIENT_CLOSED, null, now);
    }
    answered();
    releaseClientSlot();
    CachingDownstream c = cache;
    if (c != null) {
      c.clientGone();
    }
  }

  /**
   * Gives fields back to their decoders ({@link HeaderList#recycle}) when nothing else reads them
   * (no cache, no background refresh): a response head once it is encoded, else the request once it
   * is answered and its exchange is over (no attempt can send it again).
   */
  public void recycle(@Nullable HttpHeaders encodedResponseHead) {
    Exchange ex = exchange;
    HttpHeaders h = encodedResponseHead != null ? encodedResponseHead : request.headers();
    boolean over = encodedResponseHead != null || ex == null || ex.phase().isOver();
    if (cache == null && !background && over && h instanceof HeaderList received) {
      received.recycle();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Answers

  /** The request's end for the client, once: the route's in-flight gauge lets go of it. */
  private void answered() {
    Route r = route;
    if (state != State.ANSWERED && r != null && !background) {
      px.metrics.routeLeft(r.id());
    }
    state = State.ANSWERED;
  }

  private void answer(FullHttpResponse r) {
    answered();
    log(r.status().code(), null, px.ticker.read());
    client.answer(r);
  }

  private void fail(ProxyError error, String detail) {
    fail(error, detail, null, -1, null);
  }

  /**
   * Answers with the proxy's own error (through the cache's decorator, which may answer stale).
   *
   * @param scope the breaker or pool the error is about, or null
   * @param retryAfterSeconds for {@code Retry-After}, negative for none
   * @param capacity the load hint for the calling tier ({@link #CAPACITY_HEADER}), or null
   */
  void fail(
      ProxyError error,
      String detail,
      @Nullable String scope,
      long retryAfterSeconds,
      @Nullable String capacity) {
    if (state == State.ANSWERED) {
      return;
    }
    answered();
    releaseClientSlot();
    long now = px.ticker.read();
    if (background) {
      record.backgroundEnded();
    } else {
      px.metrics.requestLocal(
          RequestRecord.label(route), error.ordinal(), now - record.startNanos());
    }
    CachingDownstream c = cache;
    if (c == null || down != c || !c.answerInstead(error, detail, retryAfterSeconds)) {
      // (answered from the cache, stale, the proxy's own answer would only have been dropped)
      FullHttpResponse r =
          px.responses.build(
              client.alloc(), error, detail, scope, retryAfterSeconds, record.idText());
      if (capacity != null) {
        r.headers().set(CAPACITY_HEADER, capacity);
      }
      down.error(error, detail, r);
    }
    if (!background) {
      // The client's status: a stale copy's when the cache answered it instead; the error stays
      // in the line as the reason (and what sim replay reads as the outcome).
      int answered = c == null ? 0 : c.answeredStatus();
      record.log(
          answered != 0 ? answered : error.status().code(), error.name(), now, route, c, true);
    }
    record.endSpan(error.status().code(), error.name(), route, c);
  }

  /**
   * The exchange forwarded an origin response (whole, or cut short by {@code error}): metrics and
   * the log line, before the client can see the end.
   */
  void forwarded(Outcome outcome, int status, @Nullable ProxyError error, long now) {
    answered();
    releaseClientSlot(); // before the client sees the end: its next request may come on another
    // loop
    if (background) {
      record.backgroundEnded();
      return;
    }
    px.metrics.requestForwarded(route().id(), outcome, now - record.startNanos());
    px.metrics.originResponse(route().id(), status);
    CachingDownstream c = cache;
    int answered = c == null ? 0 : c.answeredStatus();
    // The client's status: the cache's own answer when it replaced the origin's (a merged 304, a
    // stale copy for a 5xx), else the origin's.
    log(answered != 0 ? answered : status, error == null ? null : error.name(), now);
  }

  /** The exchange started attempt number {@code n}. */
  void attemptStarted(int n) {
    record.attemptStarted(n);
  }

  private void releaseClientSlot() {
    ClientLimits limits = clientSlot;
    if (limits != null) {
      clientSlot = null;
      limits.release(from.address());
    }
  }

  private void log(int status, @Nullable String error, long now) {
    record.log(status, error, now, route, cache, false);
  }

  // ---------------------------------------------------------------------------------------------
  // Background refresh

  /**
   * Refreshes a stale entry behind the answer that served it (stale-while-revalidate, or an
   * incident that prefers stale): a conditional GET through the same exchange as any request — the
   * route's breaker, admission at the lowest class, the origin's timeout, no retry — recorded by
   * the cache's decorator into a downstream nobody reads.
   */
  static void refresh(
      ProxyContext px, Downstream client, Route route, OriginPool pool, Refresh refresh) {
    long now = px.ticker.read();
    Downstream sink = new DiscardingDownstream(client.eventLoop(), client.alloc());
    HttpRequest request = refresh.request();
    // The refresh asks the origin as the request the entry was stored for did: same scheme.
    RequestFlow f = new RequestFlow(px, sink, Client.unknown(refresh.secure()), request, now, true);
    CachingDownstream c = CachingDownstream.refreshing(px.cacheServices, sink, refresh);
    f.cache = c;
    f.down = c;
    f.route = route;
    f.pool = pool;
    f.where = new RequestTarget(null, refresh.path(), request.uri());
    f.priority = 4;
    long budget = pool.settings().timeout().toNanos() + px.deadlines.reserveNanos();
    f.expiresAtNanos = Deadline.expiresAt(budget, now);
    UpstreamCapacity cap = px.attemptPolicy(route, pool).capacity();
    if (cap != null && !cap.tryExtra(now)) {
      // The origin said it is degraded: the stale copy keeps serving, the refresh waits for it.
      f.fail(ProxyError.SHED, "the origin says it is degraded", pool.name(), -1, null);
      return;
    }
    f.proceed(now);
  }

  // ---------------------------------------------------------------------------------------------
  // What the exchange reads

  /** The request's span while it is traced, else null. */
  @Nullable Span span() {
    return record.span();
  }

  /** The core's number for this request (breaker permits, transition events). */
  long requestId() {
    return record.requestId();
  }

  Downstream downstream() {
    return down;
  }

  Client client() {
    return from;
  }

  Route route() {
    return Objects.requireNonNull(route, "route : null (expected: routed)");
  }

  OriginPool pool() {
    return Objects.requireNonNull(pool, "pool : null (expected: routed)");
  }

  /** The request's headers (as forwarded, after the trust boundary's rewriting). */
  HttpHeaders headers() {
    return request.headers();
  }

  /** The request path: the ring-hash key. */
  String path() {
    return where.path();
  }

  long expiresAtNanos() {
    return expiresAtNanos;
  }

  int priority() {
    return priority;
  }
}
