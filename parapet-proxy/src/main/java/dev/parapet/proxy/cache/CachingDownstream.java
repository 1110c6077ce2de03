package dev.parapet.proxy.cache;

import dev.parapet.core.latency.AdaptiveWait;
import dev.parapet.proxy.http.Downstream;
import dev.parapet.proxy.http.ProxyError;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The edge cache on one request's path, as a decorator of its {@link Downstream}: made by {@link
 * #lookup} after the route match, it answers from the cache, makes the request wait for another's
 * fetch, or lets it go on — and then sees the response pass through it on the way to the client.
 *
 * <pre>
 *  lookup ─FRESH──────────────────────────► ANSWER (hit; ttl; Age)    304 when the client's own
 *     │   ─STALE, max-stale / SWR / incident ► ANSWER (hit; ttl&lt;0)     conditional matches
 *     │        └ SWR, incident: a {@link Refresh} led by this request, run behind the answer
 *     │   ─MISS / must validate ─► collapser ─LEADER/OVERFLOW─► FORWARD (+ If-None-Match …)
 *     │                                       └WAITER─► WAIT ─ flight ends ─► resume on own loop
 *  head ─ 304 for our conditional ─► merged into the entry, answered from it; origin body dropped
 *       ─ 5xx, stale allowed ──────► answered stale (fwd=stale; detail="stale origin-5xx")
 *       ─ storable ────────────────► body teed into a {@link StoringTee} ─► stored, waiters woken
 *  error (breaker open, shed, pool limit, timeout, connect error) ─► stale | 504 (must-revalidate)
 *                                                                   | the error, with Cache-Status
 *  reset, clientGone ─► the flight fails; its waiters answer stale, an error, or fetch themselves
 * </pre>
 *
 * <p>Unsafe methods (POST, PUT, DELETE, PATCH …) are not looked up; a 2xx/3xx answer to one
 * invalidates the target and same-host {@code Location} / {@code Content-Location} (RFC 9111 §4.4).
 * A stale serve is a local answer: it records nothing on the breaker; the origin's own 5xx or
 * failure still counts where the exchange records it. Confined to the request's event loop.
 *
 * <p>This class holds the request's state ({@link CacheMode}) and passes the response on; the parts
 * act on it: {@link CacheLookup} (before the origin), {@link CollapsedWait} (a waiter's wake-up),
 * {@link OriginHead} (the origin's head), {@link StoringTee} (the body into the store), {@link
 * StaleIfError} (failures) and {@link StaleOnSlow} (a slow origin).
 */
public final class CachingDownstream implements Downstream {
  /** What the request does after {@link #lookup}. */
  public enum Step {
    /** Go to the origin, answering through this decorator. */
    FORWARD,
    /** Write {@link #takeAnswer()}: the cache answered. */
    ANSWER,
    /** Another request is fetching: wait; {@link Resume} hears on the request's loop. */
    WAIT
  }

  /** How a waiting request goes on, called on its own event loop. */
  public interface Resume {
    /**
     * @param answer the response to write, or null: look up again and fetch for yourself
     */
    void resume(@Nullable FullHttpResponse answer);

    /**
     * The origin answered our conditional request with a 304 for a representation this cache does
     * not hold (RFC 9111 §4.3.4): the entry was dropped; send the client's request again, as it
     * came ({@code clientHeaders}), without validators. Called on the request's loop once the first
     * exchange is over.
     */
    void refetch(HttpHeaders clientHeaders);
  }

  /**
   * {@code stale_on_slow: auto}'s inputs for one request: its origin's observed latency, the
   * requests waiting it out now (released together once the origin is overdue), and the route's
   * timeout, which caps the wait.
   */
  public record OriginWait(AdaptiveWait latency, Set<Runnable> waiting, long capNanos) {}

  final CacheServices cs;
  final EdgeCache edge;
  final Downstream delegate;
  final HttpRequest request;
  final @Nullable CacheKey key;
  final boolean head;
  final long startNanos;
  final Heuristic heuristic;
  final String routeId;
  final String originForm;
  final @Nullable Resume resume;
  final @Nullable OriginWait originWait;

  /** The client's fields: the request's own until it is forwarded, then a copy (see forward). */
  private HttpHeaders clientHeaders;

  CacheMode mode;
  private Step step = Step.FORWARD;
  private @Nullable FullHttpResponse answer;
  private @Nullable Refresh refresh;
  private int answeredStatus;

  /** The client-facing cache status so far (the request's span reads it), or null. */
  private EdgeCache.@Nullable Status outcome;

  CacheStatus.Fwd fwd = CacheStatus.Fwd.MISS;

  /** The stored entry this request validates or may fall back to, if any. */
  private @Nullable CachedResponse stale;

  /** Our own validators went with the request (a 304 is then ours to merge). */
  boolean revalidating;

  private Collapser.@Nullable Ticket<CacheKey, CachedResponse> ticket;
  private Collapser.@Nullable Flight<CacheKey, CachedResponse> flight;

  /** The storable response being recorded (its head held until its first content), or null. */
  @Nullable StoringTee tee;

  /** The {@code stale_on_slow} timer while it runs. */
  private @Nullable StaleOnSlow slow;

  private CachingDownstream(
      CacheServices cs,
      Downstream delegate,
      HttpRequest request,
      @Nullable CacheKey key,
      String routeId,
      String originForm,
      CacheMode mode,
      @Nullable Resume resume,
      @Nullable OriginWait originWait) {
    this.cs = cs;
    this.edge = cs.edge();
    this.delegate = delegate;
    this.request = request;
    this.key = key;
    this.head = request.method().equals(HttpMethod.HEAD);
    this.startNanos = cs.ticker().read();
    this.heuristic = edge.heuristic(routeId);
    this.routeId = routeId;
    this.originForm = originForm;
    this.mode = mode;
    this.resume = resume;
    this.originWait = originWait;
    this.clientHeaders = request.headers();
  }

  /**
   * Consults the cache for a request on a route that caches.
   *
   * @param host the request's Host (or absolute-form authority), null when it has none
   * @param secure the request came over https: its entries are apart from http's ({@link CacheKey})
   * @param hasBody the request announces a body (then it is not looked up)
   * @param noCollapse the request already waited for another fetch that could not serve it
   * @param resume how the request goes on if it has to wait
   * @param originWait the origin's latency for {@code stale_on_slow: auto}, or null
   */
  public static CachingDownstream lookup(
      CacheServices cs,
      Downstream client,
      HttpRequest req,
      String routeId,
      @Nullable String host,
      String originForm,
      boolean secure,
      boolean hasBody,
      boolean noCollapse,
      Resume resume,
      @Nullable OriginWait originWait) {
    CacheKey key = host == null || host.isBlank() ? null : CacheKey.of(host, originForm, secure);
    boolean lookupMethod = CacheKey.isLookupMethod(req.method());
    boolean lookup = lookupMethod && key != null && !hasBody;
    CachingDownstream c =
        new CachingDownstream(
            cs,
            client,
            req,
            key,
            routeId,
            originForm,
            lookup ? CacheMode.FORWARD : CacheMode.BYPASS,
            resume,
            originWait);
    if (lookup) {
      new CacheLookup(c).run(noCollapse);
    } else {
      c.fwd = lookupMethod ? CacheStatus.Fwd.BYPASS : CacheStatus.Fwd.METHOD;
      cs.count(EdgeCache.Status.BYPASS);
      c.outcome = EdgeCache.Status.BYPASS;
    }
    return c;
  }

  /** The decorator of a background refresh, answering into {@code sink}. */
  public static CachingDownstream refreshing(CacheServices cs, Downstream sink, Refresh r) {
    HttpRequest req = r.request();
    CachingDownstream c =
        new CachingDownstream(
            cs, sink, req, r.key, r.routeId, req.uri(), CacheMode.REFRESH, null, null);
    c.clientHeaders = r.requestHeaders;
    c.stale = r.entry;
    c.revalidating = true;
    c.flight = r.flight;
    return c;
  }

  public Step step() {
    return step;
  }

  /** The response to write for {@link Step#ANSWER}; the caller owns it. */
  public FullHttpResponse takeAnswer() {
    FullHttpResponse r = answer;
    if (r == null) {
      throw new IllegalStateException("step : " + step + " (expected: ANSWER)");
    }
    answer = null;
    return r;
  }

  /** After {@link Step#ANSWER}: a refresh to run behind the answer, or null. */
  public @Nullable Refresh takeRefresh() {
    Refresh r = refresh;
    refresh = null;
    return r;
  }

  /** The status of a response this decorator answered instead of the origin's, or 0. */
  public int answeredStatus() {
    return answeredStatus;
  }

  // ---------------------------------------------------------------------------------------------
  // Request time (by CacheLookup)

  HttpHeaders clientHeaders() {
    return clientHeaders;
  }

  CacheKey requireKey() {
    CacheKey k = key;
    if (k == null) {
      throw new IllegalStateException("cache key : null (expected: a looked-up request)");
    }
    return k;
  }

  void answerWith(FullHttpResponse r, EdgeCache.Status s, @Nullable Refresh behind) {
    answer = r;
    refresh = behind;
    step = Step.ANSWER;
    mode = CacheMode.ANSWERED;
    cs.count(s);
    outcome = s;
  }

  /** The cache answered the client so (a stale copy for an error, a hit stored meanwhile). */
  void decided(EdgeCache.Status s) {
    outcome = s;
  }

  /**
   * What the cache did for the client, for the request's span ({@code hit}, {@code miss}, {@code
   * stale}, {@code bypass}, ...), or null when it has not decided (or only refreshed behind).
   */
  public @Nullable String outcome() {
    EdgeCache.Status s = outcome;
    return s == null ? null : s.label();
  }

  void validates(CachedResponse entry, CacheStatus.Fwd why) {
    stale = entry;
    fwd = why;
  }

  CacheStatus.Fwd fwd() {
    return fwd;
  }

  /** Joins the key's flight (unless told not to) and goes on towards the origin, or waits. */
  void forward(CacheKey k, boolean noCollapse) {
    if (!head && !noCollapse && !edge.isPass(k)) {
      if (StaleOnSlow.answeredAtOnce(this, k)) {
        return;
      }
      CollapsedWait wait = resume == null ? null : new CollapsedWait(this, resume);
      Collapser.Ticket<CacheKey, CachedResponse> t =
          edge.collapser().join(k, wait == null ? CollapsedWait.NOBODY : wait);
      ticket = t;
      switch (t.role()) {
        case LEADER -> flight = t.flight();
        case WAITER -> {
          step = Step.WAIT;
          mode = CacheMode.WAITING;
          StaleOnSlow s = StaleOnSlow.start(this);
          slow = s;
          if (s != null && t.endsNoSoonerThan(s.dueNanos())) {
            s.noAnswerBefore(s.dueNanos()); // the leader's retry comes after this wait runs out
          }
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
      slow = StaleOnSlow.start(this);
    }
    step = Step.FORWARD;
  }

  /**
   * The {@code stale_on_slow} timer fired (on the request's loop) before the origin's head: answer
   * the stale copy now. A waiter leaves its flight and goes on through {@link Resume}; a leader
   * detaches: its fetch goes on and refreshes the entry, nothing more reaches the client.
   */
  void staleOnSlow(FullHttpResponse stale) {
    slow = null;
    Resume r =
        mode == CacheMode.WAITING ? resume : null; // a waiter's; a leader answers through this
    if (r == null && !(mode == CacheMode.FORWARD && !holdsHead())) {
      stale.release();
      return;
    }
    cs.count(EdgeCache.Status.STALE);
    cs.count(EdgeCache.Status.STALE_ON_SLOW);
    outcome = EdgeCache.Status.STALE;
    if (r != null) {
      mode = CacheMode.ANSWERED;
      leaveFlight();
      r.resume(stale);
    } else {
      mode = CacheMode.DETACHED;
      answeredStatus = stale.status().code();
      delegate.answer(stale);
    }
  }

  /**
   * The fetch cannot answer before {@code atNanos}: this request's {@code stale_on_slow} wait, if
   * it runs out sooner, answers now; a leader's waiters hear it too.
   */
  @Override
  public void noHeadBefore(long atNanos) {
    StaleOnSlow s = slow;
    if (s != null) {
      s.noAnswerBefore(atNanos);
    }
    Collapser.Flight<CacheKey, CachedResponse> f = flight;
    if (f != null) {
      f.noValueBefore(atNanos);
    }
  }

  /** The flight this request waits for cannot end before {@code atNanos}: as for a leader. */
  void flightEndsNoSoonerThan(long atNanos) {
    StaleOnSlow s = slow;
    if (mode == CacheMode.WAITING && s != null) {
      s.noAnswerBefore(atNanos);
    }
  }

  /** Whether the stale_on_slow timer may still answer: nothing of the origin's has arrived. */
  boolean awaitingOrigin() {
    return (mode == CacheMode.WAITING || mode == CacheMode.FORWARD) && !holdsHead();
  }

  private boolean holdsHead() {
    StoringTee t = tee;
    return t != null && t.holdsHead();
  }

  void stopSlowTimer() {
    StaleOnSlow t = slow;
    if (t != null) {
      slow = null;
      t.cancel();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Waiting (see CollapsedWait)

  /**
   * The flight this request waited for ended, on its loop: whether it still waits. From then on it
   * does not; the wait answers it or tells it to fetch for itself.
   */
  boolean stillWaiting() {
    stopSlowTimer();
    if (mode != CacheMode.WAITING) {
      return false;
    }
    mode = CacheMode.ANSWERED;
    return true;
  }

  /**
   * The waiting request gives up on the flight it joined (its own deadline came first): it leaves
   * the flight (a wake already on its way does nothing) and is answered through {@link #error},
   * with a stale copy when stale-if-error allows one.
   */
  public void stopWaiting() {
    stopSlowTimer();
    if (mode != CacheMode.WAITING) {
      return;
    }
    mode = CacheMode.FORWARD;
    leaveFlight();
  }

  /** A waiter leaves the flight it joined (a wake already on its way does nothing). */
  private void leaveFlight() {
    Collapser.Ticket<CacheKey, CachedResponse> t = ticket;
    if (t != null && t.role() == Collapser.Role.WAITER) {
      t.cancel();
    }
  }

  /** The client left. */
  public void clientGone() {
    stopSlowTimer();
    boolean waiting = mode == CacheMode.WAITING;
    mode = CacheMode.GONE;
    tee = null;
    if (waiting) {
      leaveFlight();
    }
    endFlight(null, FetchFailed.notShared("leader's client left"));
  }

  // ---------------------------------------------------------------------------------------------
  // Downstream: the response passing through

  @Override
  public EventLoop eventLoop() {
    return delegate.eventLoop();
  }

  @Override
  public ByteBufAllocator alloc() {
    return delegate.alloc();
  }

  @Override
  public void head(HttpResponse response, @Nullable String proxyStatus) {
    switch (mode) {
      case BYPASS -> OriginHead.bypass(this, response, proxyStatus);
      case FORWARD, REFRESH, DETACHED -> OriginHead.pass(this, response, proxyStatus);
      case WAITING, ANSWERED, REFETCH, GONE -> ReferenceCountUtil.release(response);
    }
  }

  /**
   * An interim response (100, 103) goes to a client still waiting for this origin's answer and is
   * never stored: nothing of it reaches the recorder, whose response is the final one. A waiter, a
   * refresh, a request already answered (stale, merged) or detached drops it.
   */
  @Override
  public void interim(HttpResponse interim) {
    if (mode == CacheMode.BYPASS || (mode == CacheMode.FORWARD && !holdsHead())) {
      CachedResponse.stripTags(interim.headers());
      delegate.interim(interim);
    } else {
      ReferenceCountUtil.release(interim);
    }
  }

  @Override
  public void content(HttpContent content) {
    if (mode == CacheMode.REFETCH) {
      boolean last = content instanceof LastHttpContent;
      content.release();
      if (last) {
        // after the exchange has ended (it calls this before unwinding)
        eventLoop().execute(this::refetch);
      }
      return;
    }
    if (mode == CacheMode.ANSWERED || mode == CacheMode.GONE || mode == CacheMode.WAITING) {
      content.release();
      return;
    }
    Downstream client = mode == CacheMode.DETACHED ? null : delegate; // DETACHED: answered stale
    StoringTee t = tee;
    if (t != null) {
      t.content(content, client);
    } else if (client != null) {
      client.content(content);
    } else {
      content.release();
    }
  }

  @Override
  public void answer(FullHttpResponse response) {
    if (mode == CacheMode.GONE || mode == CacheMode.DETACHED) {
      response.release();
      return;
    }
    mode = CacheMode.ANSWERED;
    delegate.answer(response);
  }

  /**
   * The request failed with {@code error} before any byte reached the client, and the proxy's own
   * answer is not built yet: true when the cache answered instead (a stale copy when stale-if-error
   * allows one, see {@link StaleIfError#answerInstead}); false, with nothing done, when the proxy
   * must build its answer and pass it to {@link #error}.
   *
   * @param retryAfterSeconds the {@code Retry-After} of the proxy's answer, or -1
   */
  public boolean answerInstead(ProxyError error, String detail, long retryAfterSeconds) {
    return StaleIfError.answerInstead(this, error, detail, retryAfterSeconds);
  }

  /** The request failed before any byte reached the client: see {@link StaleIfError#onError}. */
  @Override
  public void error(ProxyError error, String detail, FullHttpResponse response) {
    StaleIfError.onError(this, error, detail, response);
  }

  @Override
  public void reset(ProxyError error, String detail) {
    stopSlowTimer();
    tee = null;
    endFlight(null, FetchFailed.local(error, detail, null));
    if (mode == CacheMode.DETACHED) {
      mode = CacheMode.ANSWERED; // the client has its stale answer
    } else if (mode != CacheMode.ANSWERED && mode != CacheMode.GONE) {
      mode = CacheMode.ANSWERED;
      delegate.reset(error, detail);
    }
  }

  @Override
  public boolean isWritable() {
    // An answered request drains the origin's response into nothing: never hold its reads back.
    return mode == CacheMode.ANSWERED || mode == CacheMode.DETACHED || delegate.isWritable();
  }

  @Override
  public void readRequestBody(boolean on) {
    delegate.readRequestBody(on);
  }

  // ---------------------------------------------------------------------------------------------
  // Pieces

  private void refetch() {
    Resume r = resume;
    if (mode != CacheMode.REFETCH || r == null) {
      return; // the client left meanwhile
    }
    mode = CacheMode.ANSWERED;
    r.refetch(clientHeaders);
  }

  void answerEarly(FullHttpResponse r) {
    mode = CacheMode.ANSWERED;
    answeredStatus = r.status().code();
    delegate.answer(r);
  }

  /** The stored entry this request validates or may fall back to, if any. */
  @Nullable CachedResponse stale() {
    return stale;
  }

  void endFlight(@Nullable CachedResponse value, @Nullable Throwable cause) {
    Collapser.Flight<CacheKey, CachedResponse> f = flight;
    if (f == null) {
      return;
    }
    flight = null;
    if (value != null) {
      f.complete(value);
    } else {
      f.fail(cause == null ? FetchFailed.notShared("no response") : cause);
    }
  }

  void countUnlessBackground(EdgeCache.Status s) {
    if (mode != CacheMode.REFRESH && mode != CacheMode.DETACHED) {
      cs.count(s);
      if (outcome == null) {
        outcome = s;
      }
    }
  }
}
