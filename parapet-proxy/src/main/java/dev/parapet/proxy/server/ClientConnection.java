package dev.parapet.proxy.server;

import dev.parapet.core.admission.AdmissionListener;
import dev.parapet.core.admission.AdmissionTicket;
import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Decision;
import dev.parapet.core.breaker.Permit;
import dev.parapet.core.breaker.State;
import dev.parapet.core.deadline.DeadlineHeader;
import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.retry.BudgetSlot;
import dev.parapet.core.retry.RetryAfter;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.retry.RetryRefusal;
import dev.parapet.proxy.http1.HeaderList;
import dev.parapet.proxy.metrics.ProxyMetrics;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginConnection;
import dev.parapet.proxy.upstream.OriginPool;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.http.DefaultHttpResponse;
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
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.Timeout;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One client connection: validates each request, routes it, lets the edge cache answer it, asks the
 * per-client limit, the breaker and admission control, and runs it as an {@code Exchange} of origin
 * attempts on pooled connections of the same event loop (retries, one hedge), streaming the
 * response back — or answers itself with an honest error (or a stale copy). One request at a time:
 * while a request is handled the connection does not read further requests (pipelined ones wait,
 * decoded messages are queued).
 *
 * <pre>
 *  head ─► valid? ─► route? ─► cache ─► per-client ─► breaker ─► admission ─► deadline ─► attempts
 *            │400      │404      │hit      │429          │stale/fallback  │stale/503   │504
 *                                                        │/503
 *  attempt: pick host ─► pool slot ─► connection ─► head + body ─► response head ─► body ─► outcome
 *                          │503        │502/504                    │retry, hedge race, cache
 * </pre>
 *
 * <p>docs/proxy.md walks through every step.
 */
final class ClientConnection extends ChannelInboundHandlerAdapter {
  /** Decoded pipelined messages held before reads pause. */
  private static final int MAX_QUEUED_MESSAGES = 64;

  /** Request body bytes held while the origin connection is being made, before reads pause. */
  private static final long MAX_BUFFERED_BODY = 256 * 1024;

  /** Methods a request may be repeated with (RFC 9110 section 9.2.2), retried or hedged. */
  private static final Set<HttpMethod> IDEMPOTENT =
      Set.of(
          HttpMethod.GET,
          HttpMethod.HEAD,
          HttpMethod.OPTIONS,
          HttpMethod.TRACE,
          HttpMethod.PUT,
          HttpMethod.DELETE);

  // Header names as AsciiString constants: their hash is computed once, not per request.
  private static final AsciiString X_FORWARDED_FOR = HeaderList.token("X-Forwarded-For");
  private static final AsciiString X_FORWARDED_PROTO = HeaderList.token("X-Forwarded-Proto");
  private static final AsciiString HTTP = AsciiString.cached("http");
  private static final AsciiString DEADLINE = HeaderList.token(DeadlineHeader.NAME);

  /** The load hint on a shed, for the calling tier's retry logic and balancers. */
  static final String CAPACITY_HEADER = "Parapet-Capacity";

  private final Supplier<ProxyContext> contexts;

  /** The configuration of the current request (read once at its head: reloads swap it). */
  private ProxyContext px;

  private final RequestHeadTimer headTimer;
  private final @Nullable AccessLog accessLog;

  /** The current request as the access log names it, and its origin attempts so far. */
  private String logMethod = "";

  private String logTarget = "";
  private int logAttempts;
  private @Nullable ChannelHandlerContext ctx;
  private @Nullable Exchange exchange;
  private final ArrayDeque<Object> queued = new ArrayDeque<>();

  /** After a local answer: ignore the rest of that request's body, up to its last content. */
  private boolean skipUntilLast;

  /** The connection closes once the current response is written. */
  private boolean closing;

  /** The current request's route label and start, for metrics. */
  private String routeLabel = ProxyMetrics.NO_ROUTE;

  private long requestStart;

  /**
   * The client's address, made once per connection: as bytes for X-Forwarded-For (written with one
   * copy), and as the String it was made from ({@code AsciiString.cached}) for everything else.
   */
  private @Nullable AsciiString clientIp;

  /** Whether the peer's Priority header is believed, and under which configuration. */
  private boolean trusted;

  private @Nullable Priorities trustedFor;

  private @Nullable InetAddress peer;

  /** The edge cache's view of the current request; null when its route does not cache. */
  private @Nullable CacheSupport cacheFlow;

  /** The current request waits for another request's origin fetch (collapsed). */
  private boolean parked;

  /** The current request is handled again after waiting: it must not wait a second time. */
  private boolean uncollapsed;

  /**
   * Attempt deadlines: one check scheduled per connection, not a timer per request. A keep-alive
   * connection's requests nearly always end long before their timeout, so the check armed for an
   * earlier attempt mostly finds it done and re-arms for the current one: in steady state a
   * connection schedules about once per timeout period instead of once per request (a timer per
   * request cost an allocation, two queue hand-offs to the timer thread, and kept the finished
   * request reachable until the wheel's next tick). Deadlines are on the event loop's clock, like
   * every timer Netty schedules.
   */
  private @Nullable ScheduledFuture<?> deadlineCheck;

  /** When {@link #deadlineCheck} runs, in {@link System#nanoTime()} terms. */
  private long deadlineCheckAt;

  /**
   * The deadline of a request parked behind another request's fetch of the same object: a waiter
   * whose own budget (a shorter incoming {@code Parapet-Deadline}) ends first is answered then,
   * with a stale copy when allowed or a 504, instead of waiting out the leader's origin timeout.
   */
  private @Nullable ScheduledFuture<?> parkedDeadline;

  ClientConnection(
      Supplier<ProxyContext> contexts, RequestHeadTimer headTimer, @Nullable AccessLog accessLog) {
    this.contexts = contexts;
    this.accessLog = accessLog;
    this.px = contexts.get();
    this.headTimer = headTimer;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (closing) {
      ReferenceCountUtil.release(msg);
      return;
    }
    Exchange ex = exchange;
    if (msg instanceof HttpRequest) {
      if (ex != null || skipUntilLast || parked || !queued.isEmpty()) {
        queued.add(msg); // pipelined: handled when the current response is done
        pauseReadsIfQueueLong();
        return;
      }
      onRequest(ctx, (HttpRequest) msg);
      return;
    }
    if (!queued.isEmpty()) {
      queued.add(msg);
      pauseReadsIfQueueLong();
    } else if (ex != null && !ex.requestComplete) {
      ex.onRequestContent((HttpContent) msg);
    } else if (skipUntilLast) {
      boolean last = msg instanceof LastHttpContent;
      boolean malformed = ((HttpContent) msg).decoderResult().isFailure();
      ReferenceCountUtil.release(msg);
      if (malformed) {
        closing = true; // the body being skipped lost its framing: nothing after it can be read
        ctx.close();
      } else if (last) {
        skipUntilLast = false;
        nextRequest();
      }
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    cancel(deadlineCheck);
    deadlineCheck = null;
    Exchange ex = exchange;
    if (ex != null) {
      ex.clientGone();
    }
    CacheSupport cf = cacheFlow;
    if (cf != null) {
      cf.clientGone();
    }
    cancel(parkedDeadline);
    parkedDeadline = null;
    releaseQueued();
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    Exchange ex = exchange;
    if (ex != null) {
      ex.clientWritabilityChanged(ctx.channel().isWritable());
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }

  // -------------------------------------------------------------------------------------------
  // A request head arrives

  private void onRequest(ChannelHandlerContext ctx, HttpRequest req) {
    headTimer.headReceived();
    px = contexts.get();
    long now = px.ticker.read();
    requestStart = now;
    routeLabel = ProxyMetrics.NO_ROUTE;
    logMethod = req.method().name();
    logTarget = req.uri();
    logAttempts = 0;
    cacheFlow = null;
    boolean keepAlive = HttpUtil.isKeepAlive(req);
    boolean hasBody =
        HttpUtil.isTransferEncodingChunked(req) || HttpUtil.getContentLength(req, 0L) > 0;
    if (req.decoderResult().isFailure()) {
      Throwable cause = req.decoderResult().cause();
      local(ProxyError.BAD_REQUEST, describe(cause), null, -1, false, true);
      return;
    }
    String invalid = validate(req);
    if (invalid != null) {
      // Close after any 400: a peer that sends one malformed request may be desynchronized.
      local(ProxyError.BAD_REQUEST, invalid, null, -1, false, true);
      return;
    }
    if (ForwardedHeaders.viaContains(req.headers(), px.settings.name())) {
      local(ProxyError.LOOP_DETECTED, "this proxy is already in Via", null, -1, keepAlive, hasBody);
      return;
    }
    long declared = HttpUtil.getContentLength(req, -1L);
    if (declared > px.settings.maxBodyBytes()) {
      local(
          ProxyError.BODY_TOO_LARGE,
          "Content-Length " + declared + " (expected: <= " + px.settings.maxBodyBytes() + ")",
          null,
          -1,
          false,
          true);
      return;
    }
    String host;
    String path;
    String originForm;
    String uri = req.uri();
    if (uri.startsWith("/")) {
      host = req.headers().get(HttpHeaderNames.HOST);
      originForm = uri;
      int q = uri.indexOf('?');
      path = q < 0 ? uri : uri.substring(0, q);
    } else {
      try {
        URI u = new URI(uri);
        if (u.getRawAuthority() == null || u.getRawPath() == null) {
          throw new URISyntaxException(uri, "no authority or path");
        }
        host = u.getRawAuthority();
        path = u.getRawPath().isEmpty() ? "/" : u.getRawPath();
        originForm = path + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
      } catch (URISyntaxException e) {
        local(ProxyError.BAD_REQUEST, "request target : " + uri, null, -1, false, true);
        return;
      }
    }
    Route route = px.routes.match(host, path);
    if (route == null) {
      local(ProxyError.NO_ROUTE, "no route for this host and path", null, -1, keepAlive, hasBody);
      return;
    }
    routeLabel = route.id();
    OriginPool pool = px.origins.get(route.origin());
    if (pool == null) {
      local(ProxyError.NO_ROUTE, "route has no origin pool", route.id(), -1, keepAlive, hasBody);
      return;
    }
    if (consultCache(ctx, req, route, pool, host, originForm, keepAlive, hasBody)) {
      return; // answered from the cache, or waiting for another request's fetch
    }
    long budget = budgetNanos(req, route);
    if (budget < px.settings.minUseful().toNanos()) {
      local(
          ProxyError.DEADLINE_TOO_SHORT,
          "remaining deadline " + Math.max(0, budget / 1_000_000) + "ms is below min_useful",
          route.id(),
          -1,
          keepAlive,
          hasBody);
      return;
    }
    long id = px.requestIds.incrementAndGet();
    boolean replayable =
        !hasBody && (IDEMPOTENT.contains(req.method()) || route.retryNonIdempotent());
    String hint = req.headers().get(px.priorities.header());
    int priority =
        hint == null
            ? route.priority()
            : px.priorities.classOf(route.priority(), hint, trustedSource());
    Exchange ex =
        new Exchange(
            ctx,
            req,
            originForm,
            path,
            route,
            pool,
            keepAlive,
            now,
            budget,
            id,
            hasBody,
            replayable,
            priority);
    exchange = ex;
    ex.begin(now);
  }

  /** Whether this connection's peer may set its own priority class (cached per configuration). */
  private boolean trustedSource() {
    if (trustedFor != px.priorities) {
      trusted = px.priorities.trusts(peer());
      trustedFor = px.priorities;
    }
    return trusted;
  }

  /** The client's address, looked up once per connection. */
  private @Nullable InetAddress peer() {
    InetAddress a = peer;
    if (a == null) {
      ChannelHandlerContext c = ctx;
      if (c != null && c.channel().remoteAddress() instanceof InetSocketAddress remote) {
        a = remote.getAddress();
        peer = a;
      }
    }
    return a;
  }

  /** The client's address as text, computed once per connection. */
  private @Nullable String clientIp() {
    AsciiString ip = clientIpValue();
    return ip == null ? null : ip.toString();
  }

  private @Nullable AsciiString clientIpValue() {
    AsciiString ip = clientIp;
    if (ip == null) {
      ChannelHandlerContext c = ctx;
      if (c != null && c.channel().remoteAddress() instanceof InetSocketAddress remote) {
        ip = AsciiString.cached(remote.getAddress().getHostAddress());
        clientIp = ip;
      }
    }
    return ip;
  }

  /** Returns a message for an invalid request, or null when it is acceptable. */
  private @Nullable String validate(HttpRequest req) {
    if (req.method() == HttpMethod.CONNECT) {
      return "CONNECT is not supported: Parapet is a reverse proxy";
    }
    if (req.headers().size() > px.settings.maxHeaderFields()) {
      return "header fields : "
          + req.headers().size()
          + " (expected: <= "
          + px.settings.maxHeaderFields()
          + ")";
    }
    int hosts = 0; // counted in place: getAll would copy the values into a list per request
    for (Iterator<? extends CharSequence> it =
            req.headers().valueCharSequenceIterator(HttpHeaderNames.HOST);
        it.hasNext(); ) {
      it.next();
      hosts++;
    }
    if (req.protocolVersion().equals(HttpVersion.HTTP_1_1) ? hosts != 1 : hosts > 1) {
      return "Host headers : " + hosts + " (expected: exactly one)";
    }
    return null;
  }

  /**
   * The request's budget: min(route timeout, incoming Parapet-Deadline) minus this hop's reserve.
   */
  private long budgetNanos(HttpRequest req, Route route) {
    long budget = route.timeout().toNanos();
    long ms = DeadlineHeader.parseMillis(req.headers().get(DEADLINE));
    if (ms != DeadlineHeader.ABSENT) {
      budget = Math.min(budget, ms * 1_000_000L);
    }
    return budget - px.settings.reserve().toNanos();
  }

  private static String describe(@Nullable Throwable cause) {
    if (cause == null) {
      return "malformed request";
    }
    String m = cause.getMessage();
    String type = cause.getClass().getSimpleName();
    return m == null ? type : type + ": " + (m.length() > 200 ? m.substring(0, 200) : m);
  }

  // -------------------------------------------------------------------------------------------
  // Answers and the next request

  /**
   * Answers the current request locally. {@code keepAlive} says whether the client wants to keep
   * the connection, {@code bodyPending} whether its body may still be arriving (then the connection
   * closes: the stream cannot be resynchronized safely).
   */
  private void local(
      ProxyError error,
      String detail,
      @Nullable String scope,
      long retryAfter,
      boolean keepAlive,
      boolean bodyPending) {
    local(error, detail, scope, retryAfter, keepAlive, bodyPending, null);
  }

  /** As above, with a load hint for the calling tier ({@code Parapet-Capacity}) when not null. */
  private void local(
      ProxyError error,
      String detail,
      @Nullable String scope,
      long retryAfter,
      boolean keepAlive,
      boolean bodyPending,
      @Nullable String capacity) {
    ChannelHandlerContext c = ctx;
    if (c == null) {
      return;
    }
    boolean close =
        closing || !keepAlive || bodyPending || px.admission.overloadLevel().stopsAccepting();
    long took = px.ticker.read() - requestStart;
    px.metrics.requestLocal(routeLabel, error.ordinal(), took);
    logRequest(error.status().code(), took, error.name());
    CacheSupport cf = cacheFlow;
    FullHttpResponse r =
        cf == null
            ? px.responses.build(c.alloc(), error, detail, scope, retryAfter, close)
            : cf.onLocalError(error, detail, scope, retryAfter, close, px.ticker.read());
    if (capacity != null) {
      r.headers().set(CAPACITY_HEADER, capacity);
    }
    if (close) {
      closing = true;
      c.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
    } else {
      c.writeAndFlush(r, c.voidPromise());
      skipUntilLast = true; // the request's (empty) last content is still to come
    }
  }

  /** One access log line for the current request, when the access log is on. */
  private void logRequest(int status, long latencyNanos, @Nullable String error) {
    AccessLog log = accessLog;
    if (log != null) {
      log.record(
          System.currentTimeMillis(),
          routeLabel,
          logMethod,
          logTarget,
          status,
          latencyNanos,
          logAttempts,
          error,
          clientIp());
    }
  }

  /**
   * Asks the edge cache (after the route match, before breaker and pool); true when the request
   * needs nothing more here: answered from the cache, or parked until another request's fetch ends.
   */
  private boolean consultCache(
      ChannelHandlerContext c,
      HttpRequest req,
      Route route,
      OriginPool pool,
      @Nullable String host,
      String originForm,
      boolean keepAlive,
      boolean hasBody) {
    boolean noCollapse = uncollapsed;
    uncollapsed = false;
    CacheSupport cf =
        CacheSupport.begin(
            px,
            c,
            req,
            route,
            pool,
            host,
            originForm,
            hasBody,
            noCollapse,
            answer -> resumeCached(c, req, answer, keepAlive));
    cacheFlow = cf;
    if (cf != null && cf.step() == CacheSupport.Step.ANSWER) {
      answer(cf.takeAnswer(), keepAlive);
      return true;
    } else if (cf != null && cf.step() == CacheSupport.Step.WAIT) {
      parked = true;
      skipUntilLast = true; // its (empty) last content is dropped while it waits
      long left = requestStart + budgetNanos(req, route) - px.ticker.read();
      parkedDeadline =
          c.executor()
              .schedule(
                  () -> waitedTooLong(route, keepAlive), Math.max(1, left), TimeUnit.NANOSECONDS);
      return true;
    }
    return false;
  }

  /** Writes a response the cache made (hit, stale, 304, 504) like a local answer. */
  private void answer(FullHttpResponse r, boolean keepAlive) {
    logRequest(r.status().code(), px.ticker.read() - requestStart, null);
    ChannelHandlerContext c = ctx;
    if (c == null) {
      r.release();
    } else if (closing || !keepAlive) {
      closing = true;
      r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      c.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
    } else {
      c.writeAndFlush(r);
      skipUntilLast = true; // the request's (empty) last content is still to come
    }
  }

  /** A request that waited for another's fetch goes on: answered, or forwarded by itself. */
  private void resumeCached(
      ChannelHandlerContext c, HttpRequest req, @Nullable FullHttpResponse r, boolean keepAlive) {
    if (!parked) {
      ReferenceCountUtil.release(r);
      return;
    }
    parked = false;
    cancel(parkedDeadline);
    parkedDeadline = null;
    boolean lastRead = !skipUntilLast;
    skipUntilLast = false;
    if (r != null) {
      answer(r, keepAlive);
    } else {
      uncollapsed = true;
      onRequest(c, req);
    }
    Exchange ex = exchange;
    if (lastRead && ex != null) {
      ex.requestComplete = true;
    } else if (lastRead && skipUntilLast && !parked) {
      skipUntilLast = false;
      nextRequest();
    }
  }

  /** A parked request's own deadline came before the fetch it waits for ended. */
  private void waitedTooLong(Route route, boolean keepAlive) {
    parkedDeadline = null;
    CacheSupport cf = cacheFlow;
    if (!parked || cf == null) {
      return;
    }
    parked = false;
    cf.stopWaiting();
    boolean lastRead = !skipUntilLast;
    skipUntilLast = false;
    local(
        ProxyError.RESPONSE_TIMEOUT,
        "deadline reached while waiting for another request's fetch of this object",
        route.id(),
        -1,
        keepAlive,
        !lastRead);
    if (!closing && lastRead) {
      skipUntilLast = false;
      nextRequest();
    }
  }

  /** Makes sure the deadline check runs no later than {@code at} ({@link System#nanoTime()}). */
  private void armDeadline(long at) {
    ScheduledFuture<?> check = deadlineCheck;
    if (check != null) {
      if (deadlineCheckAt - at <= 0) {
        return; // it comes first and re-arms for what is still running then
      }
      check.cancel(false);
    }
    ChannelHandlerContext c = Objects.requireNonNull(ctx, "ctx");
    deadlineCheckAt = at;
    deadlineCheck =
        c.executor()
            .schedule(
                this::checkDeadlines, Math.max(1, at - System.nanoTime()), TimeUnit.NANOSECONDS);
  }

  private static void cancel(@Nullable ScheduledFuture<?> task) {
    if (task != null) {
      task.cancel(false);
    }
  }

  private void checkDeadlines() {
    deadlineCheck = null;
    Exchange ex = exchange;
    if (ex != null) {
      ex.expireAttempts(System.nanoTime());
    }
  }

  /**
   * @param lastWrite the response's last write, or null if it was written with a void promise (then
   *     a close goes after an empty write, which completes once everything before it is out)
   */
  private void exchangeDone(boolean close, @Nullable ChannelFuture lastWrite) {
    exchange = null;
    if (close || closing) {
      closing = true;
      ChannelFuture last = lastWrite;
      if (last == null) {
        ChannelHandlerContext c = ctx;
        if (c == null) {
          return;
        }
        last = c.writeAndFlush(Unpooled.EMPTY_BUFFER);
      }
      last.addListener(ChannelFutureListener.CLOSE);
      return;
    }
    nextRequest();
  }

  private void nextRequest() {
    ChannelHandlerContext c = ctx;
    if (c == null || closing || parked) {
      return;
    }
    headTimer.awaitNext();
    readClient(true);
    while (!queued.isEmpty() && exchange == null && !skipUntilLast && !closing) {
      Object next = queued.poll();
      if (next instanceof HttpRequest req) {
        onRequest(c, req);
      } else if (next != null) {
        ReferenceCountUtil.release(next); // content of a request already answered
      }
    }
  }

  /**
   * Reads stay on while a request is handled (toggling them costs two epoll_ctl calls per request);
   * they pause only when something piles up: pipelined requests, a body waiting for its origin
   * connection, or an origin connection that cannot take more.
   */
  private void readClient(boolean on) {
    ChannelHandlerContext c = ctx;
    if (c != null && c.channel().config().isAutoRead() != on) {
      c.channel().config().setAutoRead(on);
    }
  }

  private void pauseReadsIfQueueLong() {
    if (queued.size() > MAX_QUEUED_MESSAGES) {
      readClient(false); // resumed by nextRequest
    }
  }

  private void releaseQueued() {
    Object o;
    while ((o = queued.poll()) != null) {
      ReferenceCountUtil.release(o);
    }
  }

  // -------------------------------------------------------------------------------------------
  // One client request: admission, attempts (first, retries, a hedge), one winner

  /**
   * One client request on its way to the origin. It holds the request's admission slot and its
   * share of the extra-load budget, and runs {@link Attempt}s: the first, retries after failures
   * that are worth one (within budget and deadline, never after response bytes reached the client)
   * and at most one hedge. The first attempt whose response head is forwarded wins; others are
   * cancelled and their outcome is ignored by the breaker. Everything runs on the client's event
   * loop except the admission listener, which hops there.
   */
  private final class Exchange implements AdmissionListener {
    final ChannelHandlerContext client;
    final HttpRequest request;
    final String originForm;

    /** The request path: the ring-hash key. */
    final String path;

    final Route route;
    final boolean keepAlive;
    final long startNanos;
    final long budgetNanos;
    final long id;
    final boolean hasBody;

    /** Idempotent and without a body: may be sent again (retry) or twice at once (hedge). */
    final boolean replayable;

    final int priority;
    final AdmissionTicket ticket = new AdmissionTicket(this);
    // Made when first needed: most requests never retry, hedge or wait with a body.
    private @Nullable BudgetSlot retrySlot;
    private @Nullable BudgetSlot hedgeSlot;
    private @Nullable List<HttpContent> bufferedBody;

    /** The pool in use: the route's, or its fallback while the route's breaker is open. */
    OriginPool pool;

    OriginTraffic traffic;
    @Nullable String fallbackFrom;
    long bodyBytes;
    long bufferedBytes;
    boolean requestComplete;
    boolean headRewritten;
    @Nullable ChannelFuture cacheAnswered;
    boolean headSent;
    boolean done;
    boolean extraLoadCounted;

    /** The per-client limit this request holds a slot in, or null. */
    @Nullable ClientLimits clientLimits;

    int attempts;
    int hedges;

    /** The status of the response forwarded to the client (once a head went out). */
    int responseStatus;

    /** The attempt not yet started (admission pending) or the current non-hedge attempt. */
    @Nullable Attempt main;

    @Nullable Attempt hedge;
    @Nullable Attempt winner;
    @Nullable Timeout hedgeTimer;
    @Nullable Timeout retryTimer;

    Exchange(
        ChannelHandlerContext client,
        HttpRequest request,
        String originForm,
        String path,
        Route route,
        OriginPool pool,
        boolean keepAlive,
        long startNanos,
        long budgetNanos,
        long id,
        boolean hasBody,
        boolean replayable,
        int priority) {
      this.client = client;
      this.request = request;
      this.originForm = originForm;
      this.path = path;
      this.route = route;
      this.pool = pool;
      this.traffic = traffic(pool);
      this.keepAlive = keepAlive;
      this.startNanos = startNanos;
      this.budgetNanos = budgetNanos;
      this.id = id;
      this.hasBody = hasBody;
      this.replayable = replayable;
      this.priority = priority;
    }

    private OriginTraffic traffic(OriginPool p) {
      // Built with the context for every pool (fallbacks included): never made per request.
      return Objects.requireNonNull(px.traffic.get(p.name()), p.name());
    }

    /**
     * The client's own limit first (429), then the breaker (an open breaker fails fast without
     * queueing), then admission.
     */
    void begin(long now) {
      px.syncOverload(now);
      ClientLimits limits = px.clientLimits;
      if (limits.enabled()) {
        if (!limits.tryAcquire(peer())) {
          failLocal(
              ProxyError.CLIENT_LIMIT,
              "this client already has " + limits.max() + " requests in flight",
              px.settings.name(),
              px.retryAfterSeconds(0),
              null);
          return;
        }
        clientLimits = limits;
      }
      long key = pool.hashKey(path, clientIp());
      HostPool host = pool.pick(key);
      CircuitBreaker breaker = px.breaker(route, pool, host, pool.shardOf(key), now);
      Attempt first = new Attempt(pool, host, breaker, false);
      Decision d = breaker.tryAcquire(first.permit.requestId(id), now);
      if (!d.isPermitted()) {
        OriginPool fb = fallbackPool();
        if (fb != null) {
          long fbKey = fb.hashKey(path, clientIp());
          HostPool fbHost = fb.pick(fbKey);
          CircuitBreaker fbBreaker = px.breaker(route, fb, fbHost, fb.shardOf(fbKey), now);
          Attempt alt = new Attempt(fb, fbHost, fbBreaker, false);
          Decision fd = fbBreaker.tryAcquire(alt.permit.requestId(id), now);
          if (fd.isPermitted()) {
            fallbackFrom = pool.name();
            pool = fb;
            traffic = traffic(fb);
            first = alt;
            d = fd;
          }
        }
      }
      if (!d.isPermitted()) {
        failLocal(
            ProxyError.BREAKER_OPEN,
            "breaker open",
            breaker.key().toString(),
            px.retryAfterSeconds(breaker.retryAfterNanos(now)),
            null);
        return;
      }
      first.probe = d == Decision.PROBE;
      main = first;
      switch (px.admission.offer(ticket, priority, RequestKind.ORDINARY, now)) {
        case ADMITTED -> admitted(now);
        case QUEUED -> {} // the listener hears, exactly once
        case REJECTED -> shed(rejectReason(), now);
      }
    }

    private RejectReason rejectReason() {
      RejectReason r = ticket.rejectReason();
      return r == null ? RejectReason.LIMIT_REACHED : r;
    }

    private @Nullable OriginPool fallbackPool() {
      String name = pool.settings().fallback();
      return name == null ? null : px.origins.get(name);
    }

    // --- AdmissionListener (any thread: hop to the client's event loop)

    @Override
    public void onAdmitted(AdmissionTicket t, long nowNanos) {
      client.executor().execute(() -> admitted(px.ticker.read()));
    }

    @Override
    public void onRejected(AdmissionTicket t, RejectReason reason, long nowNanos) {
      client.executor().execute(() -> shed(reason, px.ticker.read()));
    }

    private void admitted(long now) {
      Attempt first = main;
      if (done || first == null) {
        ticket.permit().onIgnore(now); // the client left while the request was queued
        return;
      }
      long remaining = remainingNanos(now);
      if (remaining < px.settings.minUseful().toNanos()) {
        first.permit.release(now);
        failLocal(
            ProxyError.DEADLINE_TOO_SHORT,
            "remaining deadline "
                + Math.max(0, remaining / 1_000_000)
                + "ms is below min_useful after queueing",
            route.id(),
            -1,
            null);
        return;
      }
      traffic.extraLoad.requestStarted();
      extraLoadCounted = true;
      if (traffic.hedge != null && replayable && IDEMPOTENT.contains(request.method())) {
        traffic.hedge.onRequest();
      }
      start(first, now);
      if (!done && attempts == 1) {
        armHedge(now);
      }
    }

    private void shed(RejectReason reason, long now) {
      Attempt first = main;
      if (done) {
        return;
      }
      if (first != null) {
        first.permit.release(now); // never reached the origin: not evidence
      }
      px.metrics.count(
          "parapet.shed",
          "priority",
          Integer.toString(priority),
          "reason",
          reason.name().toLowerCase(Locale.ROOT));
      failLocal(
          ProxyError.SHED,
          "shed by admission control (" + reason.name().toLowerCase(Locale.ROOT) + ")",
          px.settings.name(),
          px.retryAfterSeconds(0),
          capacityHint());
    }

    /** The load hint for the calling tier on a shed: what this listener can take now. */
    private String capacityHint() {
      return "degraded; limit="
          + px.admission.limit()
          + "; inflight="
          + px.admission.inflight()
          + "; queued="
          + px.admission.queueDepth()
          + "; level="
          + px.admission.overloadLevel().name().toLowerCase(Locale.ROOT);
    }

    long remainingNanos(long now) {
      return startNanos + budgetNanos - now;
    }

    // --- starting attempts

    private void start(Attempt a, long now) {
      if (!a.pool.tryStartRequest()) {
        a.done = true;
        a.permit.release(now);
        a.releaseSlot();
        if (liveAttempt() == null) {
          failLocal(
              ProxyError.CONNECTION_LIMIT,
              "max_requests reached",
              a.pool.name(),
              px.retryAfterSeconds(0),
              null);
        }
        return;
      }
      a.started = true;
      attempts++;
      logAttempts = attempts;
      long timeout =
          Math.max(1, Math.min(a.pool.settings().timeout().toNanos(), remainingNanos(now)));
      a.timeoutNanos = timeout;
      a.deadline = System.nanoTime() + timeout;
      armDeadline(a.deadline);
      a.host.acquire(client.channel().eventLoop(), a);
    }

    /** Times out the running attempts whose deadline has passed; re-arms for the others. */
    void expireAttempts(long now) {
      Attempt m = main;
      if (m != null && m.started && !m.done && m.deadline - now <= 0) {
        m.onTimeout();
      }
      Attempt h = hedge;
      if (h != null && h.started && !h.done && h.deadline - now <= 0) {
        h.onTimeout();
      }
      m = main;
      if (m != null && m.started && !m.done) {
        armDeadline(m.deadline);
      }
      h = hedge;
      if (h != null && h.started && !h.done) {
        armDeadline(h.deadline);
      }
    }

    private @Nullable Attempt liveAttempt() {
      Attempt m = main;
      if (m != null && m.started && !m.done) {
        return m;
      }
      Attempt h = hedge;
      return h != null && h.started && !h.done ? h : null;
    }

    private @Nullable Attempt other(Attempt a) {
      Attempt o = a == main ? hedge : main;
      return o != null && o != a && o.started && !o.done ? o : null;
    }

    private boolean extraLoadAllowed() {
      return !px.admission.overloadLevel().disablesHedgesAndRetries();
    }

    private void armHedge(long now) {
      HedgePolicy policy = traffic.hedge;
      // Hedges only for idempotent methods, whatever a route allows for retries: a hedge sends
      // the request twice at once.
      if (policy == null
          || !replayable
          || !IDEMPOTENT.contains(request.method())
          || !extraLoadAllowed()) {
        return;
      }
      long delay = traffic.hedgeDelayNanos(now);
      if (delay == HedgePolicy.NO_HEDGE
          || delay >= remainingNanos(now) - px.settings.minUseful().toNanos()) {
        return;
      }
      hedgeTimer =
          px.timeouts.newTimeout(
              t -> client.executor().execute(this::onHedgeTimer), delay, TimeUnit.NANOSECONDS);
    }

    private void onHedgeTimer() {
      hedgeTimer = null;
      Attempt m = main;
      HedgePolicy policy = traffic.hedge;
      if (done || headSent || winner != null || policy == null || m == null || m.done) {
        return;
      }
      if (!extraLoadAllowed()) {
        countHedge("refused_overload");
        return;
      }
      long now = px.ticker.read();
      long key = pool.hashKey(path, clientIp());
      HostPool host = pool.pick(key, m.host);
      CircuitBreaker breaker = px.breaker(route, pool, host, pool.shardOf(key), now);
      boolean closed = m.breaker.state() == State.CLOSED && breaker.state() == State.CLOSED;
      BudgetSlot hedgeSlot = this.hedgeSlot;
      if (hedgeSlot == null) {
        hedgeSlot = new BudgetSlot();
        this.hedgeSlot = hedgeSlot;
      }
      HedgeDecision hd = policy.tryHedge(closed, hedges, hedgeSlot);
      if (!hd.isHedge()) {
        countHedge(hd.name().toLowerCase(Locale.ROOT));
        return;
      }
      Attempt h = new Attempt(pool, host, breaker, true);
      Decision d = breaker.tryAcquire(h.permit.requestId(id), now);
      if (!d.isPermitted()) {
        hedgeSlot.release();
        countHedge("breaker_not_closed");
        return;
      }
      h.probe = d == Decision.PROBE;
      h.slot = hedgeSlot;
      hedges++;
      hedge = h;
      countHedge("sent");
      start(h, now);
    }

    private void countHedge(String result) {
      px.metrics.count("parapet.hedges", "origin", pool.name(), "result", result);
    }

    private void countRetry(String result) {
      px.metrics.count("parapet.retries", "origin", pool.name(), "result", result);
    }

    /**
     * Schedules a retry after attempt {@code failed} if the failure is worth one and budget,
     * deadline and attempts allow. Returns whether a retry is coming.
     */
    private boolean retry(Attempt failed, long retryAfterNanos, long now) {
      if (!replayable || headSent || done) {
        return false;
      }
      if (!extraLoadAllowed()) {
        countRetry("refused_overload");
        return false;
      }
      BudgetSlot retrySlot = this.retrySlot;
      if (retrySlot == null) {
        retrySlot = new BudgetSlot();
        this.retrySlot = retrySlot;
      }
      long delay =
          traffic.retry.decide(attempts, false, retryAfterNanos, remainingNanos(now), retrySlot);
      if (!RetryPolicy.isRetry(delay)) {
        countRetry(RetryRefusal.of(delay).name().toLowerCase(Locale.ROOT));
        return false;
      }
      countRetry("sent");
      HostPool avoid = failed.host;
      retryTimer =
          px.timeouts.newTimeout(
              t -> client.executor().execute(() -> onRetryTimer(avoid)),
              Math.max(1, delay),
              TimeUnit.NANOSECONDS);
      return true;
    }

    private void onRetryTimer(HostPool avoid) {
      retryTimer = null;
      BudgetSlot retrySlot = Objects.requireNonNull(this.retrySlot, "retrySlot");
      if (done) {
        retrySlot.release();
        return;
      }
      long now = px.ticker.read();
      long remaining = remainingNanos(now);
      if (remaining < px.settings.minUseful().toNanos()) {
        retrySlot.release();
        fail(
            ProxyError.DEADLINE_TOO_SHORT,
            "remaining deadline " + Math.max(0, remaining / 1_000_000) + "ms is below min_useful",
            route.id());
        return;
      }
      long key = pool.hashKey(path, clientIp());
      HostPool host = pool.pick(key, avoid);
      CircuitBreaker breaker = px.breaker(route, pool, host, pool.shardOf(key), now);
      Attempt r = new Attempt(pool, host, breaker, false);
      Decision d = breaker.tryAcquire(r.permit.requestId(id), now);
      if (!d.isPermitted()) {
        // The breaker opened meanwhile: answer as a new request would be answered, saying that
        // this one already waited for an attempt (it was not a fast fail).
        retrySlot.release();
        fail(
            ProxyError.BREAKER_OPEN,
            "breaker open; the retry was refused after a failed attempt",
            breaker.key().toString(),
            px.retryAfterSeconds(breaker.retryAfterNanos(now)));
        return;
      }
      r.probe = d == Decision.PROBE;
      r.slot = retrySlot;
      main = r;
      start(r, now);
    }

    // --- request body

    void onRequestContent(HttpContent c) {
      if (c.decoderResult().isFailure()) {
        // The body lost its framing (a chunk size that is not one): what arrived must not reach
        // the origin as a whole request. Local, not evidence; the connection closes after the 400.
        Throwable cause = c.decoderResult().cause();
        ReferenceCountUtil.release(c);
        fail(ProxyError.BAD_REQUEST, describe(cause), null);
        return;
      }
      bodyBytes += c.content().readableBytes();
      if (bodyBytes > px.settings.maxBodyBytes()) {
        ReferenceCountUtil.release(c);
        // Local, not evidence; the body is still arriving, so the connection closes after the 413.
        fail(
            ProxyError.BODY_TOO_LARGE,
            "request body over " + px.settings.maxBodyBytes() + " bytes",
            null);
        return;
      }
      if (c instanceof LastHttpContent) {
        requestComplete = true;
      }
      if (replayable) {
        ReferenceCountUtil.release(c); // no body: every attempt ends its request head itself
        return;
      }
      Attempt m = main;
      Channel o = m == null ? null : m.origin;
      if (o == null) {
        List<HttpContent> buffered = bufferedBody;
        if (buffered == null) {
          buffered = new ArrayList<>(4);
          bufferedBody = buffered;
        }
        buffered.add(c);
        bufferedBytes += c.content().readableBytes();
        if (bufferedBytes > MAX_BUFFERED_BODY) {
          readClient(false); // resumed once the origin connection takes the buffer
        }
        return;
      }
      o.writeAndFlush(c, o.voidPromise());
      if (!o.isWritable()) {
        readClient(false); // resumed when the origin connection drains
      }
    }

    /** The request head for an attempt: rewritten in place once, its deadline set each time. */
    private HttpRequest forwardHead(long now) {
      HttpRequest fwd = request;
      if (!headRewritten) {
        headRewritten = true;
        // The decoded request is ours alone: rewrite it in place rather than copying its headers.
        boolean chunked = HttpUtil.isTransferEncodingChunked(request);
        fwd = request.setUri(originForm).setProtocolVersion(HttpVersion.HTTP_1_1);
        HttpHeaders h = fwd.headers();
        ForwardedHeaders.stripHopByHop(h);
        if (chunked) {
          h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        ForwardedHeaders.appendVia(h, px.viaMember);
        AsciiString ip = clientIpValue();
        if (ip != null) {
          String xff = h.get(X_FORWARDED_FOR);
          h.set(X_FORWARDED_FOR, xff == null ? ip : xff + ", " + ip);
        }
        h.set(X_FORWARDED_PROTO, HTTP);
      }
      fwd.headers().set(DEADLINE, DeadlineHeader.format(remainingNanos(now)));
      return fwd;
    }

    void clientWritabilityChanged(boolean writable) {
      Attempt w = winner;
      Channel o = w == null ? null : w.origin;
      if (!done && o != null) {
        o.config().setAutoRead(writable);
      }
    }

    // --- endings

    /**
     * The winner's response is complete (outcome recorded): return its connection, go on with the
     * client.
     */
    private void succeed(Attempt a, @Nullable ChannelFuture lastWrite) {
      done = true;
      cancelTimers();
      long now = px.ticker.read();
      a.finish(a.originKeepAlive && requestComplete);
      // Only healthy answers teach the limit: a slow or failing origin is its breaker's business,
      // and letting its latency shrink the listener-wide limit would starve healthy routes.
      if (a.outcome.kind() == Outcome.Kind.SUCCESS) {
        ticket.permit().onSuccess(now);
      } else {
        ticket.permit().onIgnore(now);
      }
      endExtraLoad();
      exchangeDone(!keepAlive || !requestComplete, lastWrite);
    }

    /** Answers locally before anything reached the origin (breaker open, shed, pool full). */
    private void failLocal(
        ProxyError error,
        String detail,
        @Nullable String scope,
        long retryAfter,
        @Nullable String capacity) {
      done = true;
      cancelTimers();
      long now = px.ticker.read();
      releaseHolds(now);
      local(error, detail, scope, retryAfter, keepAlive, hasBody && !requestComplete, capacity);
      if (!closing && requestComplete) {
        skipUntilLast = false; // the whole request was read already
        nextRequest();
      }
    }

    /**
     * The exchange failed after its last attempt (its evidence already recorded). Answers the
     * client, or closes it if a response head already went out.
     */
    private void fail(ProxyError error, String detail, @Nullable String scope) {
      fail(
          error,
          detail,
          scope,
          error.status() == HttpResponseStatus.SERVICE_UNAVAILABLE ? px.retryAfterSeconds(0) : -1);
    }

    private void fail(ProxyError error, String detail, @Nullable String scope, long retryAfter) {
      done = true;
      CacheSupport cf = cacheFlow;
      if (cf != null && headSent) {
        cf.abort(error, detail); // a recording in progress is dropped, waiters are released
      }
      cancelTimers();
      long now = px.ticker.read();
      cancelAttempts(Outcome.LOCAL_REJECTION, now);
      releaseHolds(now); // see succeed(): origin trouble does not teach the limit
      if (headSent) {
        closing = true;
        ChannelFuture answered = cacheAnswered;
        if (answered != null) {
          answered.addListener(ChannelFutureListener.CLOSE); // the cache's answer is complete
        } else {
          client.close(); // the client saw a response head: a truncated body is the only honest end
        }
        return;
      }
      local(error, detail, scope, retryAfter, keepAlive, !requestComplete, null);
      if (!closing) {
        skipUntilLast = false; // the whole request was read already
        nextRequest();
      }
    }

    void clientGone() {
      if (done) {
        return;
      }
      done = true;
      cancelTimers();
      long now = px.ticker.read();
      Attempt m = main;
      stop(m, Outcome.CLIENT_CANCELLED, now);
      stop(hedge, Outcome.CLIENT_CANCELLED, now);
      px.metrics.requestForwarded(route.id(), Outcome.CLIENT_CANCELLED, now - startNanos);
      logRequest(AccessLog.CLIENT_CLOSED, now - startNanos, null);
      releaseHolds(now);
    }

    /**
     * Gives back what an exchange that did not succeed holds besides its attempts: the admission
     * slot (ignored as a sample, or taken out of the queue), the buffered body, its budgets.
     */
    private void releaseHolds(long now) {
      if (ticket.permit().isActive()) {
        ticket.permit().onIgnore(now);
      } else {
        px.admission.cancel(ticket);
      }
      releaseBody();
      endExtraLoad();
      exchange = null;
    }

    /**
     * Stops every attempt but the winner, with an outcome the breaker ignores ({@code HEDGE_LOST}
     * for a hedge race, {@code LOCAL_REJECTION} when the exchange itself failed).
     */
    private void cancelAttempts(Outcome why, long now) {
      if (main != winner) {
        stop(main, why, now);
      }
      if (hedge != winner) {
        stop(hedge, why, now);
      }
    }

    /** Stops one attempt: its connection closes, its permit ends with {@code ifContacted}. */
    private void stop(@Nullable Attempt a, Outcome ifContacted, long now) {
      if (a == null || a.done) {
        return;
      }
      if (a.started) {
        a.end(a.origin != null ? ifContacted : null, now);
        a.finish(false);
      } else {
        a.done = true;
        a.permit.release(now);
      }
    }

    private void releaseClientSlot() {
      ClientLimits limits = clientLimits;
      if (limits != null) {
        clientLimits = null;
        limits.release(peer());
      }
    }

    private void endExtraLoad() {
      releaseClientSlot();
      if (extraLoadCounted) {
        extraLoadCounted = false;
        traffic.extraLoad.requestFinished();
      }
      BudgetSlot retrySlot = this.retrySlot;
      if (retrySlot != null && retrySlot.isHeld()) {
        retrySlot.release();
      }
    }

    private void releaseBody() {
      List<HttpContent> buffered = bufferedBody;
      if (buffered != null) {
        for (HttpContent c : buffered) {
          ReferenceCountUtil.release(c);
        }
        buffered.clear();
      }
    }

    private void cancelTimers() {
      Timeout t = hedgeTimer;
      if (t != null) {
        t.cancel();
        hedgeTimer = null;
      }
      t = retryTimer;
      if (t != null) {
        t.cancel();
        retryTimer = null;
      }
    }

    // -------------------------------------------------------------------------------------------
    // One attempt: a pooled origin connection, the request head (and body), the response

    private final class Attempt implements HostPool.Acquirer, OriginConnection.Listener {
      final OriginPool pool;
      final HostPool host;
      final CircuitBreaker breaker;
      final boolean isHedge;
      final Permit permit = new Permit();
      @Nullable BudgetSlot slot;
      @Nullable Channel origin;
      long timeoutNanos;

      /** When this attempt times out, in {@link System#nanoTime()} terms (once started). */
      long deadline;

      long sentNanos;
      boolean started;
      boolean originKeepAlive;
      boolean probe;
      boolean done;
      Outcome outcome = Outcome.SUCCESS;

      Attempt(OriginPool pool, HostPool host, CircuitBreaker breaker, boolean isHedge) {
        this.pool = pool;
        this.host = host;
        this.breaker = breaker;
        this.isHedge = isHedge;
      }

      // --- HostPool.Acquirer

      @Override
      public boolean isCancelled() {
        return done;
      }

      @Override
      public void onConnection(Channel ch) {
        if (done) {
          host.release(ch, true);
          return;
        }
        origin = ch;
        OriginConnection.of(ch).attach(this);
        ch.config().setAutoRead(true); // no-op unless a previous exchange paused it
        long now = px.ticker.read();
        // Void promises: no future object per write; a failed write reaches the origin
        // connection's exceptionCaught, which ends this attempt.
        ch.write(forwardHead(now), ch.voidPromise());
        if (replayable) {
          ch.write(LastHttpContent.EMPTY_LAST_CONTENT, ch.voidPromise());
        } else {
          List<HttpContent> buffered = bufferedBody;
          if (buffered != null) {
            for (HttpContent c : buffered) {
              ch.write(c, ch.voidPromise());
            }
            buffered.clear();
          }
          bufferedBytes = 0;
        }
        ch.flush();
        sentNanos = now;
        if (!replayable && !requestComplete) {
          readClient(ch.isWritable());
        }
      }

      @Override
      public void onConnectFailure(Throwable cause) {
        if (done) {
          return;
        }
        boolean timedOut = cause instanceof ConnectTimeoutException;
        failed(
            timedOut ? ProxyError.CONNECT_TIMEOUT : ProxyError.CONNECTION_REFUSED,
            describe(cause),
            Outcome.CONNECT_FAILURE);
      }

      @Override
      public void onLimitReached() {
        if (done) {
          return;
        }
        failed(
            ProxyError.CONNECTION_LIMIT, "origin host connection and pending limits reached", null);
      }

      // --- OriginConnection.Listener

      @Override
      public void onOriginMessage(HttpObject msg) {
        if (done) {
          ReferenceCountUtil.release(msg);
          return;
        }
        if (msg.decoderResult().isFailure()) {
          ReferenceCountUtil.release(msg);
          failed(
              ProxyError.MALFORMED_RESPONSE,
              describe(msg.decoderResult().cause()),
              Outcome.MALFORMED_RESPONSE);
          return;
        }
        if (msg instanceof HttpResponse resp) {
          if (resp.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
            ReferenceCountUtil.release(msg);
            // Interim responses (100, 103) are not forwarded; 101 would need an upgrade we refuse.
            if (resp.status().code() == 101) {
              failed(
                  ProxyError.MALFORMED_RESPONSE,
                  "origin switched protocols",
                  Outcome.MALFORMED_RESPONSE);
            }
            return;
          }
          long now = px.ticker.read();
          int code = resp.status().code();
          outcome = pool.settings().classifier().classifyResponse(code, now - sentNanos, now);
          pool.settings().latency().record(now - sentNanos, now);
          originKeepAlive = HttpUtil.isKeepAlive(resp);
          if (replayable && traffic.retryOn.statuses().contains(code)) {
            // Worth another try, and nothing reached the client yet: the sibling attempt if one
            // runs, else a retry within budget and deadline.
            long retryAfter =
                RetryAfter.parseNanos(
                    resp.headers().get(HttpHeaderNames.RETRY_AFTER), System.currentTimeMillis());
            releaseSlot(); // this attempt's budget place ends here, whatever comes next
            if (other(this) != null || retry(this, retryAfter, now)) {
              ReferenceCountUtil.release(msg);
              end(outcome, now);
              finish(false); // the body is unread: the connection cannot be reused
              return;
            }
          }
          win(now);
          responseStatus = code;
          HttpResponse out =
              msg instanceof HttpContent
                  ? new DefaultHttpResponse(
                      HttpVersion.HTTP_1_1, resp.status(), resp.headers().copy())
                  : resp.setProtocolVersion(HttpVersion.HTTP_1_1);
          HttpHeaders h = out.headers();
          boolean framedByLength = h.contains(HttpHeaderNames.CONTENT_LENGTH);
          ForwardedHeaders.stripHopByHop(h);
          // The cache may answer instead (a 304 merged into the stored entry, stale for a 5xx):
          // then this origin response is read and dropped.
          CacheSupport cf = cacheFlow;
          FullHttpResponse alt = cf == null ? null : cf.onOriginHead(code, h, now);
          if (!framedByLength && mayHaveBody(resp.status())) {
            h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
          }
          ForwardedHeaders.appendVia(h, px.viaMember);
          String from = fallbackFrom;
          if (from != null) {
            // RFC 9209: members are appended, the one closest to the client last.
            String ours =
                px.settings.name()
                    + "; next-hop="
                    + LocalResponses.sfString(pool.name())
                    + "; details="
                    + LocalResponses.sfString("fallback: breaker of " + from + " open");
            String before = h.get("Proxy-Status");
            h.set("Proxy-Status", before == null ? ours : before + ", " + ours);
          }
          if (px.admission.overloadLevel().stopsAccepting()) {
            closing = true; // overloaded: ask the client to go elsewhere
          }
          if (!keepAlive || closing) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
          }
          headSent = true;
          if (alt != null) {
            if (!keepAlive || closing) {
              alt.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            }
            responseStatus = alt.status().code();
            cacheAnswered = client.writeAndFlush(alt);
          } else {
            client.write(out, client.voidPromise());
          }
          if (!(msg instanceof HttpContent)) {
            return;
          }
        }
        if (msg instanceof HttpContent content) {
          boolean last = content instanceof LastHttpContent;
          if (last) {
            // Evidence first: by the time the client sees the end, the breaker has counted it.
            long now = px.ticker.read();
            end(outcome, now);
            px.metrics.requestForwarded(route.id(), outcome, now - startNanos);
            logRequest(responseStatus, now - startNanos, null);
            // Before the client can see the end: its next request may arrive on another loop.
            releaseClientSlot();
          }
          ChannelFuture answered = cacheAnswered;
          if (answered != null) {
            ReferenceCountUtil.release(content);
            if (last) {
              succeed(this, answered);
            }
            return;
          }
          CacheSupport cf = cacheFlow;
          if (cf != null) {
            cf.onOriginContent(content, last);
          }
          if (last) {
            // A future only when the connection closes after this write; a kept-alive one needs
            // none, and a void promise spares the allocation and its notification.
            boolean closes = !keepAlive || !requestComplete || closing;
            ChannelFuture written = null;
            if (closes) {
              written = client.writeAndFlush(content);
            } else {
              client.writeAndFlush(content, client.voidPromise());
            }
            succeed(this, written);
            return;
          }
          client.writeAndFlush(content, client.voidPromise());
          if (!client.channel().isWritable()) {
            Channel o = origin;
            if (o != null) {
              o.config().setAutoRead(false);
            }
          }
        }
      }

      /** This attempt's response goes to the client: any other attempt is cancelled. */
      private void win(long now) {
        winner = this;
        Timeout t = hedgeTimer;
        if (t != null) {
          t.cancel();
          hedgeTimer = null;
        }
        if (hedges > 0) {
          countHedge(isHedge ? "won" : "lost");
        }
        cancelAttempts(Outcome.HEDGE_LOST, now);
      }

      @Override
      public void onOriginClosed() {
        if (!done) {
          failed(
              ProxyError.CONNECTION_TERMINATED,
              headSent && winner == this
                  ? "origin closed mid-response"
                  : "origin closed before responding",
              Outcome.CONNECT_FAILURE);
        }
      }

      @Override
      public void onOriginException(Throwable cause) {
        if (!done) {
          failed(ProxyError.CONNECTION_TERMINATED, describe(cause), Outcome.CONNECT_FAILURE);
        }
      }

      @Override
      public void onOriginWritabilityChanged(boolean writable) {
        if (!done && !requestComplete && !replayable) {
          readClient(writable);
        }
      }

      void onTimeout() {
        if (done) {
          return;
        }
        failed(
            ProxyError.RESPONSE_TIMEOUT,
            "no complete response within " + (timeoutNanos / 1_000_000) + "ms",
            origin == null ? null : Outcome.TIMEOUT);
      }

      /**
       * This attempt failed. {@code evidence} is the origin outcome to record, or null when the
       * failure was local (not evidence about the origin). The exchange goes on with a sibling or a
       * retry when it can; otherwise it fails.
       */
      private void failed(ProxyError error, String detail, @Nullable Outcome evidence) {
        long now = px.ticker.read();
        end(evidence, now);
        finish(false);
        if (Exchange.this.done) {
          return;
        }
        if (headSent) {
          px.metrics.requestForwarded(
              route.id(), evidence == null ? Outcome.LOCAL_REJECTION : evidence, now - startNanos);
          logRequest(responseStatus, now - startNanos, error.name());
          fail(error, detail, breaker.key().toString());
          return;
        }
        if (other(this) != null) {
          return; // the sibling attempt may still answer
        }
        if (evidence != null && retryable(evidence) && retry(this, RetryAfter.ABSENT, now)) {
          return;
        }
        fail(error, detail, breaker.key().toString());
      }

      private boolean retryable(Outcome evidence) {
        return switch (evidence) {
          case CONNECT_FAILURE -> traffic.retryOn.connectFailure();
          case TIMEOUT -> traffic.retryOn.timeout();
          default -> false;
        };
      }

      /**
       * Records what the attempt told us: breaker, probe and attempt metrics; or releases the
       * breaker permit unused when {@code evidence} is null.
       */
      void end(@Nullable Outcome evidence, long now) {
        if (evidence == null) {
          permit.release(now);
          return;
        }
        if (evidence.kind() == Outcome.Kind.FAILURE || evidence.kind() == Outcome.Kind.SLOW) {
          px.metrics.failureSeen(breaker.key(), now); // before the outcome: it may trip the breaker
        }
        permit.onOutcome(evidence, now);
        pool.onAttemptOutcome(host, evidence, sentNanos == 0 ? -1 : now - sentNanos, now);
        px.metrics.attempt(pool.name(), evidence);
        if (probe) {
          px.metrics.probe(breaker, evidence);
        }
      }

      /** Ends the attempt's hold on the connection, the pool slot and its budget place. */
      void finish(boolean reuse) {
        done = true;
        Channel o = origin;
        if (o != null) {
          OriginConnection.of(o).detach();
          host.release(o, reuse);
          origin = null;
        }
        if (started) {
          pool.finishRequest();
        }
        releaseSlot();
      }

      void releaseSlot() {
        BudgetSlot s = slot;
        if (s != null) {
          slot = null;
          s.release();
        }
      }

      private boolean mayHaveBody(HttpResponseStatus status) {
        int code = status.code();
        return request.method() != HttpMethod.HEAD && code != 204 && code != 304;
      }
    }
  }
}
