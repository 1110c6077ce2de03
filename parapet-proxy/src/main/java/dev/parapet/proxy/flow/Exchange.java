package dev.parapet.proxy.flow;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.exchange.Attempt;
import dev.parapet.core.exchange.AttemptSequence;
import dev.parapet.core.exchange.ExchangeFailure;
import dev.parapet.core.exchange.ExchangePhase;
import dev.parapet.core.fleet.FleetLimiter;
import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.retry.RetryAfter;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.retry.RetryRefusal;
import dev.parapet.core.retry.UpstreamCapacity;
import dev.parapet.proxy.http.Downstream;
import dev.parapet.proxy.http.ForwardedHeaders;
import dev.parapet.proxy.http.LocalResponses;
import dev.parapet.proxy.http.ProxyError;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginPool;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.opentelemetry.api.trace.Span;
import java.util.Locale;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One request's origin work: the core's {@link AttemptSequence} (gate, admission, deadline,
 * attempts, classification, retries, one hedge, one winner) driven on the request's event loop. It
 * owns the {@link UpstreamAttempt}s, which report back through {@link AttemptListener}; it alone
 * picks hosts, forwards the winner's response into the request's {@link Downstream} and records
 * evidence. What the request itself needs (its route, its answer, its logs) is its {@link
 * RequestFlow}'s.
 */
final class Exchange extends AttemptSequence<UpstreamAttempt> implements AttemptListener {
  private final RequestFlow flow;
  private final ProxyContext px;
  private final Route route;
  private final OriginPool routePool;
  private final Downstream down;
  private final EventLoop loop;
  private final OutboundRequest outbound;
  private @Nullable ScheduledFuture<?> retryTimer;
  private @Nullable ScheduledFuture<?> hedgeTimer;

  /** The status of the response forwarded to the client, once a head went out. */
  private int responseStatus;

  Exchange(RequestFlow flow, OutboundRequest outbound, int priority, RequestKind kind) {
    super(
        flow.requestId(),
        flow.expiresAtNanos(),
        flow.px.deadlines,
        flow.px.admission,
        priority,
        kind,
        outbound.mayRetry(kind),
        outbound.mayHedge(kind));
    this.flow = flow;
    this.px = flow.px;
    this.route = flow.route();
    this.routePool = flow.pool();
    this.down = flow.downstream();
    this.loop = down.eventLoop();
    this.outbound = outbound;
  }

  int responseStatus() {
    return responseStatus;
  }

  // ---------------------------------------------------------------------------------------------
  // From the client's side (through the flow)

  /** A piece of the client's request body. */
  void onRequestContent(HttpContent c) {
    if (phase().isOver()) {
      ReferenceCountUtil.release(c);
      return;
    }
    outbound.add(c, down);
  }

  /** The client's writability changed: the winner's origin reads follow it. */
  void clientWritable(boolean writable) {
    UpstreamAttempt w = winner();
    if (w != null && phase() == ExchangePhase.ANSWERING) {
      w.readOrigin(writable);
    }
  }

  /** Gives up for a reason of the flow's own (a malformed body): attempts end as local. */
  void abandon(long now) {
    abort(now);
    outbound.discard();
  }

  /** The client left: attempts end as cancelled, and a body held for them is released. */
  void clientGone(long now) {
    cancel(now);
    outbound.discard();
  }

  // ---------------------------------------------------------------------------------------------
  // The sequence's hooks

  @Override
  protected int admissionPartition() {
    return px.admissionPartition(route);
  }

  @Override
  protected UpstreamAttempt pick(Attempt.Kind kind, @Nullable UpstreamAttempt previous, long now) {
    return attemptOn(previous == null ? routePool : previous.pool(), kind, previous, now);
  }

  @Override
  protected @Nullable UpstreamAttempt fallback(UpstreamAttempt refused, long now) {
    String name = routePool.settings().fallback();
    OriginPool fb = name == null ? null : px.origins.get(name);
    return fb == null ? null : attemptOn(fb, Attempt.Kind.FIRST, null, now);
  }

  private UpstreamAttempt attemptOn(
      OriginPool pool, Attempt.Kind kind, @Nullable UpstreamAttempt avoid, long now) {
    long key = pool.hashKey(flow.path(), flow.client().ip(), flow.headers());
    HostPool host = avoid == null ? pool.pick(key) : pool.pick(key, avoid.host());
    CircuitBreaker breaker = px.breaker(route, pool, host, pool.shardOf(key), now);
    return new UpstreamAttempt(kind, breaker, px.attemptPolicy(route, pool), pool, host, this);
  }

  @Override
  protected void startAttempt(UpstreamAttempt a, long now) {
    flow.attemptStarted(attempts());
    if (flow.span() != null) {
      a.span(
          px.tracing.startAttempt(
              flow.span(),
              a.kind().name().toLowerCase(Locale.ROOT),
              a.pool().name(),
              a.host().id(),
              a.requireBreaker().state().name()));
    }
    if (!a.start(loop, AttemptDeadlines.of(loop, px.ticker), now)) {
      onAttemptFailed(a, null, now);
    }
  }

  @Override
  protected void releaseAttempt(UpstreamAttempt a, boolean complete) {
    a.release(complete && a.originKeepAlive() && outbound.complete());
    Span span = a.span();
    if (span != null) {
      a.span(null);
      span.end();
    }
  }

  @Override
  protected void recordEvidence(UpstreamAttempt a, Outcome o, long latencyNanos, long now) {
    CircuitBreaker b = a.requireBreaker();
    if (o.kind() == Outcome.Kind.FAILURE || o.kind() == Outcome.Kind.SLOW) {
      px.metrics.failureSeen(b.key(), now); // before the permit completes: it may trip the breaker
    }
    a.pool().onAttemptOutcome(a.host(), o, latencyNanos, now);
    if (o == Outcome.SUCCESS) {
      a.pool().staleWait(route.id()).latency().onSuccess(latencyNanos, now);
    }
    Span span = a.span();
    if (span != null) {
      span.setAttribute(Tracing.OUTCOME, o.name());
    }
    px.metrics.attempt(a.pool().name(), o);
    if (a.isProbe()) {
      px.metrics.probe(b, o);
    }
  }

  @Override
  protected void schedule(Timer timer, long delayNanos) {
    Runnable task = timer == Timer.RETRY ? this::retryDue : this::hedgeDue;
    ScheduledFuture<?> f = loop.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    if (timer == Timer.RETRY) {
      retryTimer = f;
      // Nothing can answer before the retry is sent: a waiting cache may answer now.
      down.noHeadBefore(px.ticker.read() + delayNanos);
    } else {
      hedgeTimer = f;
    }
  }

  private void retryDue() {
    retryTimer = null;
    onTimer(Timer.RETRY, px.ticker.read());
  }

  private void hedgeDue() {
    hedgeTimer = null;
    onTimer(Timer.HEDGE, px.ticker.read());
  }

  @Override
  protected void cancelTimer(Timer timer) {
    ScheduledFuture<?> f = timer == Timer.RETRY ? retryTimer : hedgeTimer;
    if (f != null) {
      f.cancel(false);
      if (timer == Timer.RETRY) {
        retryTimer = null;
      } else {
        hedgeTimer = null;
      }
    }
  }

  @Override
  protected void admissionDecided(@Nullable RejectReason shed) {
    try {
      loop.execute(() -> resumeAdmission(shed, px.ticker.read()));
    } catch (RejectedExecutionException e) {
      // the loop is shutting down: its connections go with it
    }
  }

  @Override
  protected void retryDecided(long decision) {
    String result =
        RetryPolicy.isRetry(decision)
            ? "sent"
            : RetryRefusal.of(decision).name().toLowerCase(Locale.ROOT);
    px.metrics.count("parapet.retries", "origin", poolName(), "result", result);
  }

  @Override
  protected void hedgeDecided(HedgeDecision decision) {
    String result = decision.isHedge() ? "sent" : decision.name().toLowerCase(Locale.ROOT);
    px.metrics.count("parapet.hedges", "origin", poolName(), "result", result);
  }

  @Override
  protected void hedgeRaceEnded(UpstreamAttempt winner) {
    String result = winner.kind() == Attempt.Kind.HEDGE ? "won" : "lost";
    px.metrics.count("parapet.hedges", "origin", poolName(), "result", result);
  }

  private String poolName() {
    UpstreamAttempt a = current();
    return a == null ? routePool.name() : a.pool().name();
  }

  @Override
  protected void succeeded(UpstreamAttempt winner, long now) {
    flow.forwarded(winner.outcome(), responseStatus, null, now);
  }

  @Override
  protected void failed(ExchangeFailure failure, @Nullable UpstreamAttempt cause, long now) {
    outbound.discard();
    switch (failure) {
      case BREAKER_OPEN -> {
        CircuitBreaker b = require(cause).requireBreaker();
        flow.fail(
            ProxyError.BREAKER_OPEN,
            "breaker open",
            b.keyText(),
            px.retryAfterSeconds(b.retryAfterNanos(now)),
            null);
      }
      case RETRY_BREAKER_OPEN -> {
        // Answered as a new request would be, saying that this one already waited for an attempt
        // (it was not a fast fail).
        CircuitBreaker b = require(cause).requireBreaker();
        flow.fail(
            ProxyError.BREAKER_OPEN,
            "breaker open; the retry was refused after a failed attempt",
            b.keyText(),
            px.retryAfterSeconds(b.retryAfterNanos(now)),
            null);
      }
      case SHED -> shed();
      case FLEET_LIMIT -> fleetLimited(require(cause), now);
      case DEADLINE, DEADLINE_BEFORE_RETRY ->
          flow.fail(
              ProxyError.DEADLINE_TOO_SHORT,
              "remaining deadline "
                  + Math.max(0, usableNanos(now) / 1_000_000)
                  + "ms is below min_useful"
                  + (failure == ExchangeFailure.DEADLINE ? " after queueing" : ""),
              route.id(),
              -1,
              null);
      case ATTEMPT_FAILED -> {
        UpstreamAttempt a = require(cause);
        ProxyError e = a.error() == null ? ProxyError.CONNECTION_TERMINATED : a.error();
        flow.fail(e, a.detail(), a.scope(), retryAfter(e), null);
      }
      case TRUNCATED -> {
        UpstreamAttempt a = require(cause);
        ProxyError e = a.error() == null ? ProxyError.CONNECTION_TERMINATED : a.error();
        Outcome evidence = a.evidence();
        flow.forwarded(
            evidence == null ? Outcome.LOCAL_REJECTION : evidence, responseStatus, e, now);
        down.reset(e, a.detail());
      }
    }
  }

  private long retryAfter(ProxyError e) {
    return e.status().code() == 503 ? px.retryAfterSeconds(0) : -1;
  }

  private void shed() {
    RejectReason reason = shedReason();
    String why = (reason == null ? RejectReason.LIMIT_REACHED : reason).name();
    px.metrics.count(
        "parapet.shed",
        "priority",
        Integer.toString(flow.priority()),
        "reason",
        why.toLowerCase(Locale.ROOT));
    flow.fail(
        ProxyError.SHED,
        "shed by admission control (" + why.toLowerCase(Locale.ROOT) + ")",
        px.settings.name(),
        px.retryAfterSeconds(0),
        capacityValue(0));
  }

  /** The origin's fleet ceiling had no token for the first attempt or a retry. */
  private void fleetLimited(UpstreamAttempt refused, long now) {
    String origin = refused.pool().name();
    px.metrics.count(
        "parapet.shed", "priority", Integer.toString(flow.priority()), "reason", "fleet_limit");
    FleetLimiter limiter = refused.policy().fleetLimit();
    long wait = limiter == null ? 0 : limiter.retryAfterNanos(now);
    String mode = limiter == null ? "shared" : limiter.mode().name().toLowerCase(Locale.ROOT);
    flow.fail(
        ProxyError.FLEET_LIMIT,
        "fleet ceiling of origin "
            + origin
            + " reached ("
            + mode
            + (attempts() > 0 ? "; the retry was refused after a failed attempt" : "")
            + ")",
        origin,
        px.retryAfterSeconds(Math.max(1, wait)),
        "degraded; fleet_limit=" + origin + "; mode=" + mode);
  }

  private static UpstreamAttempt require(@Nullable UpstreamAttempt a) {
    if (a == null) {
      throw new IllegalStateException("attempt : null (expected: the failure's attempt)");
    }
    return a;
  }

  // ---------------------------------------------------------------------------------------------
  // AttemptListener: what the attempts report

  @Override
  public void onConnected(UpstreamAttempt a, Channel origin) {
    long now = px.ticker.read();
    outbound.sendTo(origin, usableNanos(now), down, a.span());
    onSent(a, now);
  }

  /**
   * An interim response reaches the client from an attempt still waiting for its final head (so a
   * hedge's or a discarded attempt's never follows the winner's final head); it is evidence of
   * nothing: the attempt's outcome and latency come from the final response.
   */
  @Override
  public void onInterim(UpstreamAttempt a, HttpResponse interim) {
    if (a.state() != Attempt.State.SENT || phase() != ExchangePhase.ATTEMPTING) {
      ReferenceCountUtil.release(interim);
      return;
    }
    ForwardedHeaders.stripHopByHop(interim.headers());
    down.interim(interim);
  }

  @Override
  public void onResponseHead(UpstreamAttempt a, HttpResponse head) {
    long now = px.ticker.read();
    int code = head.status().code();
    long retryAfter =
        a.policy().retryOn().statuses().contains(code)
            ? RetryAfter.parseNanos(
                head.headers().get(HttpHeaderNames.RETRY_AFTER), System.currentTimeMillis())
            : RetryAfter.ABSENT;
    heardCapacity(a, head.headers(), now); // before the retry decision it may refuse
    if (!onResponseHead(a, code, retryAfter, now)) {
      ReferenceCountUtil.release(head); // a sibling or a retry answers instead
      return;
    }
    responseStatus = code;
    Span span = a.span();
    if (span != null) {
      span.setAttribute(Tracing.STATUS, (long) code);
    }
    ForwardedHeaders.stripHopByHop(head.headers());
    sayCapacity(head.headers());
    down.head(head, fallbackNote(a));
  }

  /**
   * The origin's {@code Parapet-Capacity} is about the origin, for this hop alone: it is heard
   * (when the origin's policy listens) and removed, never passed on as if this tier had said it.
   */
  private static void heardCapacity(UpstreamAttempt a, HttpHeaders headers, long now) {
    String said = headers.get(RequestFlow.CAPACITY_HEADER);
    if (said == null) {
      return;
    }
    headers.remove(RequestFlow.CAPACITY_HEADER);
    UpstreamCapacity cap = a.policy().capacity();
    double q = UpstreamCapacity.parse(said);
    if (cap != null && q >= 0) {
      long hold =
          RetryAfter.parseNanos(
              headers.get(HttpHeaderNames.RETRY_AFTER), System.currentTimeMillis());
      cap.signal(q, hold, now);
    }
  }

  /**
   * Tells a trusted calling tier early, on a forwarded response, that this tier is near its limit:
   * {@code degraded; q=…} with the share of extra load it can still take — none while requests
   * queue or the overload manager sheds, the spare fraction of the limit above 90 % use.
   */
  private void sayCapacity(HttpHeaders headers) {
    AdmissionController ac = px.admission;
    int limit = ac.limit();
    int inflight = ac.inflight();
    boolean pressed = ac.queueDepth() > 0 || ac.overloadLevel() != OverloadLevel.NONE;
    if ((!pressed && inflight * 10L < limit * 9L) || !flow.client().trustedBy(px.trustedPeers)) {
      return;
    }
    double q = pressed ? 0 : Math.max(0, (limit - inflight) / (double) limit);
    headers.set(RequestFlow.CAPACITY_HEADER, capacityValue(q));
  }

  private String capacityValue(double q) {
    AdmissionController ac = px.admission;
    return "degraded; q="
        + String.format(Locale.ROOT, "%.2f", q)
        + "; limit="
        + ac.limit()
        + "; inflight="
        + ac.inflight()
        + "; queued="
        + ac.queueDepth()
        + "; level="
        + ac.overloadLevel().name().toLowerCase(Locale.ROOT);
  }

  /** This hop's Proxy-Status member when a fallback pool answers (RFC 9209), else null. */
  private @Nullable String fallbackNote(UpstreamAttempt a) {
    if (a.pool() == routePool) {
      return null;
    }
    return px.settings.name()
        + "; next-hop="
        + LocalResponses.sfString(a.pool().name())
        + "; details="
        + LocalResponses.sfString("fallback: breaker of " + routePool.name() + " open");
  }

  @Override
  public void onResponseContent(UpstreamAttempt a, HttpContent content) {
    if (a.state() != Attempt.State.WON) {
      ReferenceCountUtil.release(content);
      return;
    }
    if (content instanceof LastHttpContent) {
      // Evidence first: by the time the client sees the end, the breaker has counted it.
      onResponseComplete(a, px.ticker.read());
      if (phase() == ExchangePhase.SUCCEEDED) {
        down.content(content);
      } else {
        ReferenceCountUtil.release(content);
      }
      return;
    }
    down.content(content);
    if (!down.isWritable()) {
      a.readOrigin(false); // resumed by clientWritable
    }
  }

  @Override
  public void onAttemptFailed(UpstreamAttempt a, @Nullable Outcome evidence) {
    onAttemptFailed(a, evidence, px.ticker.read());
  }

  @Override
  public void onOriginWritable(UpstreamAttempt a, boolean writable) {
    outbound.originWritable(writable, down);
  }

  @Override
  public String toString() {
    return "Exchange[" + route.id() + ", " + phase() + ", attempts=" + attempts() + "]";
  }
}
