package dev.parapet.proxy.server;

import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Decision;
import dev.parapet.core.breaker.Permit;
import dev.parapet.core.deadline.DeadlineHeader;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.proxy.metrics.ProxyMetrics;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginConnection;
import dev.parapet.proxy.upstream.OriginPool;
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
import io.netty.util.ReferenceCountUtil;
import io.netty.util.Timeout;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One client connection: validates each request, routes it, asks the breaker, and streams it to a
 * pooled origin connection on the same event loop and the response back — or answers itself with an
 * honest error. One request at a time: while a request is handled the connection does not read
 * further requests (pipelined ones wait, decoded messages are queued).
 *
 * <pre>
 *  head ─► valid? ─► route? ─► deadline ≥ min_useful? ─► pool slot? ─► breaker permits?
 *            │400      │404         │504                    │503           │503 + Retry-After
 *            ▼         ▼            ▼                       ▼              ▼
 *  acquire connection ─► forward head + body ─► response head (classify) ─► body ─► complete permit
 *        │refused/timeout ─► 502/504 (connect failure)       │attempt timeout ─► 504 (timeout)
 * </pre>
 */
final class ClientConnection extends ChannelInboundHandlerAdapter {
  /** Decoded pipelined messages held before reads pause. */
  private static final int MAX_QUEUED_MESSAGES = 64;

  /** Request body bytes held while the origin connection is being made, before reads pause. */
  private static final long MAX_BUFFERED_BODY = 256 * 1024;

  private final Supplier<ProxyContext> contexts;

  /** The configuration of the current request (read once at its head: reloads swap it). */
  private ProxyContext px;

  private final RequestHeadTimer headTimer;
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

  private @Nullable String clientIp;

  /** The edge cache's view of the current request; null when its route does not cache. */
  private @Nullable CacheSupport cacheFlow;

  /** The current request waits for another request's origin fetch (collapsed). */
  private boolean parked;

  /** The current request is handled again after waiting: it must not wait a second time. */
  private boolean uncollapsed;

  ClientConnection(Supplier<ProxyContext> contexts, RequestHeadTimer headTimer) {
    this.contexts = contexts;
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
      ReferenceCountUtil.release(msg);
      if (last) {
        skipUntilLast = false;
        nextRequest();
      }
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    Exchange ex = exchange;
    if (ex != null) {
      ex.clientGone();
    }
    CacheSupport cf = cacheFlow;
    if (cf != null) {
      cf.clientGone();
    }
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
    if (!pool.tryStartRequest()) {
      local(
          ProxyError.CONNECTION_LIMIT,
          "max_requests reached",
          pool.name(),
          px.retryAfterSeconds(0),
          keepAlive,
          hasBody);
      return;
    }
    HostPool target = pool.pick();
    CircuitBreaker breaker = px.breaker(route, pool, target, now);
    long id = px.requestIds.incrementAndGet();
    Exchange ex =
        new Exchange(ctx, req, originForm, route, pool, target, breaker, keepAlive, now, budget);
    Decision d = breaker.tryAcquire(ex.permit.requestId(id), now);
    if (!d.isPermitted()) {
      pool.finishRequest();
      local(
          ProxyError.BREAKER_OPEN,
          "breaker open",
          breaker.key().toString(),
          px.retryAfterSeconds(breaker.retryAfterNanos(now)),
          keepAlive,
          hasBody);
      return;
    }
    ex.probe = d == Decision.PROBE;
    exchange = ex;
    ex.start();
  }

  /** The client's address as text, computed once per connection. */
  private @Nullable String clientIp() {
    String ip = clientIp;
    if (ip == null) {
      ChannelHandlerContext c = ctx;
      if (c != null && c.channel().remoteAddress() instanceof InetSocketAddress remote) {
        ip = remote.getAddress().getHostAddress();
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
    int hosts = req.headers().getAll(HttpHeaderNames.HOST).size();
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
    long ms = DeadlineHeader.parseMillis(req.headers().get(DeadlineHeader.NAME));
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
    ChannelHandlerContext c = ctx;
    if (c == null) {
      return;
    }
    boolean close = closing || !keepAlive || bodyPending;
    px.metrics.requestLocal(routeLabel, error.ordinal(), px.ticker.read() - requestStart);
    CacheSupport cf = cacheFlow;
    FullHttpResponse r =
        cf == null
            ? px.responses.build(c.alloc(), error, detail, scope, retryAfter, close)
            : cf.onLocalError(error, detail, scope, retryAfter, close, px.ticker.read());
    if (close) {
      closing = true;
      c.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
    } else {
      c.writeAndFlush(r);
      skipUntilLast = true; // the request's (empty) last content is still to come
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
      return true;
    }
    return false;
  }

  /** Writes a response the cache made (hit, stale, 304, 504) like a local answer. */
  private void answer(FullHttpResponse r, boolean keepAlive) {
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

  private void exchangeDone(boolean close, ChannelFuture lastWrite) {
    exchange = null;
    if (close || closing) {
      closing = true;
      lastWrite.addListener(ChannelFutureListener.CLOSE);
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
  // One request to the origin

  private final class Exchange implements HostPool.Acquirer, OriginConnection.Listener {
    final ChannelHandlerContext client;
    final HttpRequest request;
    final String originForm;
    final Route route;
    final OriginPool pool;
    final HostPool host;
    final CircuitBreaker breaker;
    final boolean keepAlive;
    final long startNanos;
    final long budgetNanos;
    final Permit permit = new Permit();
    final List<HttpContent> bufferedBody = new ArrayList<>();
    long bodyBytes;
    long bufferedBytes;
    boolean requestComplete;
    long sentNanos;
    @Nullable Channel origin;
    @Nullable Timeout timer;
    @Nullable ChannelFuture cacheAnswered;
    boolean headSent;
    boolean originKeepAlive;
    Outcome outcome = Outcome.SUCCESS;
    boolean probe;
    boolean done;

    Exchange(
        ChannelHandlerContext client,
        HttpRequest request,
        String originForm,
        Route route,
        OriginPool pool,
        HostPool host,
        CircuitBreaker breaker,
        boolean keepAlive,
        long startNanos,
        long budgetNanos) {
      this.client = client;
      this.request = request;
      this.originForm = originForm;
      this.route = route;
      this.pool = pool;
      this.host = host;
      this.breaker = breaker;
      this.keepAlive = keepAlive;
      this.startNanos = startNanos;
      this.budgetNanos = budgetNanos;
    }

    void start() {
      long attempt = Math.min(pool.settings().timeout().toNanos(), budgetNanos);
      // A hashed wheel: O(1) to arm and cancel, where a per-request scheduled task on the event
      // loop costs a priority-queue insert and removal (7 % of the proxy's CPU when profiled).
      timer =
          px.timeouts.newTimeout(
              t -> client.executor().execute(this::onTimeout), attempt, TimeUnit.NANOSECONDS);
      host.acquire(client.channel().eventLoop(), this);
    }

    // --- request body

    void onRequestContent(HttpContent c) {
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
      Channel o = origin;
      if (o == null) {
        bufferedBody.add(c);
        bufferedBytes += c.content().readableBytes();
        if (bufferedBytes > MAX_BUFFERED_BODY) {
          readClient(false); // resumed once the origin connection takes the buffer
        }
        return;
      }
      o.writeAndFlush(c);
      if (!o.isWritable()) {
        readClient(false); // resumed when the origin connection drains
      }
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
      // The decoded request is ours alone: rewrite it in place rather than copying its headers.
      boolean chunked = HttpUtil.isTransferEncodingChunked(request);
      HttpRequest fwd = request.setUri(originForm).setProtocolVersion(HttpVersion.HTTP_1_1);
      HttpHeaders h = fwd.headers();
      ForwardedHeaders.stripHopByHop(h);
      if (chunked) {
        h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
      }
      ForwardedHeaders.appendVia(h, px.settings.name());
      String ip = clientIp();
      if (ip != null) {
        String xff = h.get("X-Forwarded-For");
        h.set("X-Forwarded-For", xff == null ? ip : xff + ", " + ip);
      }
      h.set("X-Forwarded-Proto", "http");
      long now = px.ticker.read();
      h.set(DeadlineHeader.NAME, DeadlineHeader.format(startNanos + budgetNanos - now));
      ch.write(fwd);
      for (HttpContent c : bufferedBody) {
        ch.write(c);
      }
      bufferedBody.clear();
      ch.flush();
      sentNanos = now;
      bufferedBytes = 0;
      if (!requestComplete) {
        readClient(ch.isWritable());
      }
    }

    @Override
    public void onConnectFailure(Throwable cause) {
      if (done) {
        return;
      }
      boolean timedOut = cause instanceof ConnectTimeoutException;
      fail(
          timedOut ? ProxyError.CONNECT_TIMEOUT : ProxyError.CONNECTION_REFUSED,
          describe(cause),
          Outcome.CONNECT_FAILURE);
    }

    @Override
    public void onLimitReached() {
      if (done) {
        return;
      }
      fail(ProxyError.CONNECTION_LIMIT, "origin host connection and pending limits reached", null);
    }

    // --- OriginConnection.Listener

    @Override
    public void onOriginMessage(HttpObject msg) {
      if (done) {
        ReferenceCountUtil.release(msg);
        return;
      }
      if (msg instanceof HttpResponse resp) {
        if (resp.decoderResult().isFailure()) {
          ReferenceCountUtil.release(msg);
          fail(
              ProxyError.MALFORMED_RESPONSE,
              describe(resp.decoderResult().cause()),
              Outcome.MALFORMED_RESPONSE);
          return;
        }
        if (resp.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
          // Interim responses (100, 103) are not forwarded; 101 would need an upgrade we refuse.
          if (resp.status().code() == 101) {
            ReferenceCountUtil.release(msg);
            fail(
                ProxyError.MALFORMED_RESPONSE,
                "origin switched protocols",
                Outcome.MALFORMED_RESPONSE);
          } else {
            ReferenceCountUtil.release(msg);
          }
          return;
        }
        long now = px.ticker.read();
        outcome =
            pool.settings()
                .classifier()
                .classifyResponse(resp.status().code(), now - sentNanos, now);
        pool.settings().latency().record(now - sentNanos, now);
        originKeepAlive = HttpUtil.isKeepAlive(resp);
        // A bare head is ours alone: rewrite it in place; a full message is copied (it is also
        // the content written below).
        HttpResponse out =
            msg instanceof HttpContent
                ? new DefaultHttpResponse(
                    HttpVersion.HTTP_1_1, resp.status(), resp.headers().copy())
                : resp.setProtocolVersion(HttpVersion.HTTP_1_1);
        HttpHeaders h = out.headers();
        boolean framedByLength = h.contains(HttpHeaderNames.CONTENT_LENGTH);
        ForwardedHeaders.stripHopByHop(h);
        CacheSupport cf = cacheFlow;
        FullHttpResponse alt = cf == null ? null : cf.onOriginHead(resp.status().code(), h, now);
        if (!framedByLength && mayHaveBody(resp.status())) {
          h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        ForwardedHeaders.appendVia(h, px.settings.name());
        if (!keepAlive || closing) {
          h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        headSent = true;
        if (alt != null) { // the cache answers instead: the origin's response is read and dropped
          if (!keepAlive || closing) {
            alt.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
          }
          cacheAnswered = client.writeAndFlush(alt);
        } else {
          client.write(out);
        }
        if (!(msg instanceof HttpContent)) {
          return;
        }
      }
      if (msg instanceof HttpContent content) {
        if (content.decoderResult().isFailure()) {
          ReferenceCountUtil.release(msg);
          fail(
              ProxyError.MALFORMED_RESPONSE,
              describe(content.decoderResult().cause()),
              Outcome.MALFORMED_RESPONSE);
          return;
        }
        boolean last = content instanceof LastHttpContent;
        if (last) {
          // Evidence first: by the time the client sees the end, the breaker has counted it.
          long now = px.ticker.read();
          evidence(outcome, now);
          px.metrics.requestForwarded(route.id(), outcome, now - startNanos);
        }
        ChannelFuture answered = cacheAnswered;
        if (answered != null) {
          ReferenceCountUtil.release(content);
          if (last) {
            succeed(answered);
          }
          return;
        }
        CacheSupport cf = cacheFlow;
        if (cf != null) {
          cf.onOriginContent(content, last);
        }
        ChannelFuture written = client.writeAndFlush(content);
        if (last) {
          succeed(written);
        } else if (!client.channel().isWritable()) {
          Channel o = origin;
          if (o != null) {
            o.config().setAutoRead(false);
          }
        }
      }
    }

    @Override
    public void onOriginClosed() {
      if (!done) {
        fail(
            ProxyError.CONNECTION_TERMINATED,
            headSent ? "origin closed mid-response" : "origin closed before responding",
            Outcome.CONNECT_FAILURE);
      }
    }

    @Override
    public void onOriginException(Throwable cause) {
      if (!done) {
        fail(ProxyError.CONNECTION_TERMINATED, describe(cause), Outcome.CONNECT_FAILURE);
      }
    }

    @Override
    public void onOriginWritabilityChanged(boolean writable) {
      if (!done && !requestComplete) {
        readClient(writable);
      }
    }

    void clientWritabilityChanged(boolean writable) {
      Channel o = origin;
      if (!done && o != null && headSent) {
        o.config().setAutoRead(writable);
      }
    }

    // --- endings

    private void onTimeout() {
      timer = null;
      if (done) {
        return;
      }
      fail(
          ProxyError.RESPONSE_TIMEOUT,
          "no complete response within "
              + (Math.min(pool.settings().timeout().toNanos(), budgetNanos) / 1_000_000)
              + "ms",
          origin == null ? null : Outcome.TIMEOUT);
    }

    /**
     * The response is complete (outcome recorded): return the connection, go on with the client.
     */
    private void succeed(ChannelFuture lastWrite) {
      done = true;
      cancelTimer();
      Channel o = origin;
      if (o != null) {
        OriginConnection.of(o).detach();
        host.release(o, originKeepAlive && requestComplete);
      }
      pool.finishRequest();
      exchangeDone(!keepAlive || !requestComplete, lastWrite);
    }

    /**
     * The exchange failed. {@code evidence} is the origin outcome to record, or null when the
     * failure was local (not evidence about the origin).
     */
    private void fail(ProxyError error, String detail, @Nullable Outcome evidence) {
      done = true;
      CacheSupport cf = cacheFlow;
      if (cf != null && headSent) {
        cf.abort(error, detail);
      }
      cancelTimer();
      long now = px.ticker.read();
      if (evidence != null) {
        evidence(evidence, now);
      } else {
        permit.release(now);
      }
      releaseBody();
      Channel o = origin;
      if (o != null) {
        OriginConnection.of(o).detach();
        host.release(o, false);
      }
      pool.finishRequest();
      exchange = null;
      if (headSent) {
        closing = true;
        px.metrics.requestForwarded(
            route.id(), evidence == null ? Outcome.LOCAL_REJECTION : evidence, now - startNanos);
        ChannelFuture answered = cacheAnswered;
        if (answered != null) {
          answered.addListener(ChannelFutureListener.CLOSE); // the cache's answer is complete
        } else {
          client.close(); // the client saw a response head: a truncated body is the only honest end
        }
        return;
      }
      long retryAfter =
          error.status() == HttpResponseStatus.SERVICE_UNAVAILABLE ? px.retryAfterSeconds(0) : -1;
      local(error, detail, breaker.key().toString(), retryAfter, keepAlive, !requestComplete);
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
      cancelTimer();
      long now = px.ticker.read();
      if (origin != null) {
        evidence(Outcome.CLIENT_CANCELLED, now);
      } else {
        permit.release(now);
      }
      px.metrics.requestForwarded(route.id(), Outcome.CLIENT_CANCELLED, now - startNanos);
      releaseBody();
      Channel o = origin;
      if (o != null) {
        OriginConnection.of(o).detach();
        host.release(o, false);
      }
      pool.finishRequest();
      exchange = null;
    }

    /** Records what the origin attempt told us: breaker, probe and attempt metrics. */
    private void evidence(Outcome o, long now) {
      if (o.kind() == Outcome.Kind.FAILURE || o.kind() == Outcome.Kind.SLOW) {
        px.metrics.failureSeen(breaker.key(), now); // before the outcome: it may trip the breaker
      }
      permit.onOutcome(o, now);
      px.metrics.attempt(pool.name(), o);
      if (probe) {
        px.metrics.probe(breaker, o);
      }
    }

    private void releaseBody() {
      for (HttpContent c : bufferedBody) {
        ReferenceCountUtil.release(c);
      }
      bufferedBody.clear();
    }

    private void cancelTimer() {
      Timeout t = timer;
      if (t != null) {
        t.cancel();
        timer = null;
      }
    }

    private boolean mayHaveBody(HttpResponseStatus status) {
      int code = status.code();
      return request.method() != HttpMethod.HEAD && code != 204 && code != 304;
    }
  }
}
