package dev.parapet.proxy.flow;

import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.exchange.Attempt;
import dev.parapet.core.exchange.AttemptPolicy;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.proxy.http.ProxyError;
import dev.parapet.proxy.tls.HandshakeFailures;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginConnection;
import dev.parapet.proxy.upstream.OriginPool;
import io.netty.channel.Channel;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.ReferenceCountUtil;
import io.opentelemetry.api.trace.Span;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * One attempt at an origin host over a pooled connection: it takes a slot in its origin pool, a
 * connection from its host, arms its own timeout, and turns what the connection reports into calls
 * on its {@link AttemptListener} (the exchange). Its life — pending, connecting, sent, won, ended —
 * is the core {@link Attempt}'s, moved by the exchange's decision sequence; what it holds here (the
 * pool slot, the connection, the timer) is given back once, by {@link #release}.
 *
 * <pre>
 * start ─► pool slot ─► timer ─► host.acquire ─► onConnection ─► listener.onConnected (request out)
 *            │full                     │refused, limit       origin messages ─► head, content
 *            ▼                         ▼                     closed, exception, timer ─► failed
 *         false                     failed
 * </pre>
 */
class UpstreamAttempt extends Attempt implements HostPool.Acquirer, OriginConnection.Listener {
  private @Nullable Span span;
  private final OriginPool pool;
  private final HostPool host;
  private final AttemptListener listener;
  private @Nullable Channel origin;

  /** The loop's timeouts this attempt waits in, once started. */
  private @Nullable AttemptDeadlines deadlines;

  // Links of AttemptDeadlines' list: this attempt's deadline and its neighbours while it waits.
  long dueAt;
  @Nullable UpstreamAttempt duePrev;
  @Nullable UpstreamAttempt dueNext;
  boolean dueLinked;

  /** Whether it holds a slot in {@link OriginPool#tryStartRequest} (given back in release). */
  private boolean poolSlot;

  /** The origin's response allows the connection to be reused. */
  private boolean originKeepAlive;

  private @Nullable ProxyError error;
  private String detail = "";
  private String scope = "";
  private @Nullable Outcome evidence;

  UpstreamAttempt(
      Kind kind,
      CircuitBreaker breaker,
      AttemptPolicy policy,
      OriginPool pool,
      HostPool host,
      AttemptListener listener) {
    super(kind, breaker, policy);
    this.pool = pool;
    this.host = host;
    this.listener = listener;
  }

  /** The attempt's span while traced, else null. */
  @Nullable Span span() {
    return span;
  }

  void span(@Nullable Span s) {
    this.span = s;
  }

  OriginPool pool() {
    return pool;
  }

  HostPool host() {
    return host;
  }

  CircuitBreaker requireBreaker() {
    CircuitBreaker b = breaker();
    if (b == null) {
      throw new IllegalStateException("attempt : " + this + " (expected: a breaker)");
    }
    return b;
  }

  /** Why it failed, once it did: the answer the client gets if nothing else is tried. */
  @Nullable ProxyError error() {
    return error;
  }

  String detail() {
    return detail;
  }

  /** What the failure is about: the breaker's key, or the pool's name for a full pool. */
  String scope() {
    return scope;
  }

  /** What the failure said about the origin, or null when it was local. */
  @Nullable Outcome evidence() {
    return evidence;
  }

  boolean originKeepAlive() {
    return originKeepAlive;
  }

  /**
   * Takes a pool slot, arms the timeout ({@link #timeoutNanos()} from {@code now}) and asks the
   * host for a connection. False when the pool's {@code max_requests} is reached (then nothing is
   * held).
   */
  boolean start(EventLoop loop, AttemptDeadlines timeouts, long now) {
    if (!pool.tryStartRequest()) {
      failedWith(ProxyError.CONNECTION_LIMIT, "max_requests reached", pool.name(), null);
      return false;
    }
    poolSlot = true;
    deadlines = timeouts;
    timeouts.add(this, now + timeoutNanos());
    host.acquire(loop, this);
    return true;
  }

  /** Pauses or resumes reading the origin's response (the client cannot take more). */
  void readOrigin(boolean on) {
    Channel o = origin;
    if (o != null) {
      o.config().setAutoRead(on);
    }
  }

  /** Gives back the timeout, the connection (kept for reuse only when {@code reuse}), the slot. */
  void release(boolean reuse) {
    AttemptDeadlines d = deadlines;
    if (d != null) {
      d.remove(this);
    }
    Channel o = origin;
    if (o != null) {
      origin = null;
      OriginConnection.of(o).detach();
      host.release(o, reuse);
    }
    if (poolSlot) {
      poolSlot = false;
      pool.finishRequest();
    }
  }

  /** Its deadline passed ({@link AttemptDeadlines}). */
  void timedOut() {
    if (isLive()) {
      fail(
          ProxyError.RESPONSE_TIMEOUT,
          "no complete response within " + (timeoutNanos() / 1_000_000) + "ms",
          origin == null ? null : Outcome.TIMEOUT);
    }
  }

  // --- HostPool.Acquirer

  @Override
  public boolean isCancelled() {
    return !isLive();
  }

  @Override
  public void onConnection(Channel ch) {
    if (!isLive()) {
      host.release(ch, true);
      return;
    }
    origin = ch;
    OriginConnection.of(ch).attach(this);
    ch.config().setAutoRead(true); // no-op unless a previous exchange paused it
    listener.onConnected(this, ch);
  }

  @Override
  public void onConnectFailure(Throwable cause) {
    if (isLive()) {
      // A failed TLS handshake is a failed connect too: breaker evidence, outlier evidence, the
      // connect fast-trip; only the error the client is told differs.
      fail(connectError(cause), RequestChecks.describe(cause), Outcome.CONNECT_FAILURE);
    }
  }

  static ProxyError connectError(Throwable cause) {
    if (cause instanceof ConnectTimeoutException) {
      return ProxyError.CONNECT_TIMEOUT;
    }
    if (cause instanceof SSLException) {
      return switch (HandshakeFailures.classify(cause)) {
        case CERTIFICATE -> ProxyError.TLS_CERTIFICATE_ERROR;
        case TIMEOUT -> ProxyError.CONNECT_TIMEOUT;
        case PROTOCOL -> ProxyError.TLS_PROTOCOL_ERROR;
      };
    }
    return ProxyError.CONNECTION_REFUSED;
  }

  @Override
  public void onLimitReached() {
    if (isLive()) {
      fail(ProxyError.CONNECTION_LIMIT, "origin host connection and pending limits reached", null);
    }
  }

  // --- OriginConnection.Listener

  @Override
  public void onOriginMessage(HttpObject msg) {
    if (!isLive()) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (msg.decoderResult().isFailure()) {
      ReferenceCountUtil.release(msg);
      fail(
          ProxyError.MALFORMED_RESPONSE,
          RequestChecks.describe(msg.decoderResult().cause()),
          Outcome.MALFORMED_RESPONSE);
    } else if (msg instanceof HttpResponse resp) {
      if (resp.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
        // Interim responses (100, 103): the exchange decides whether they reach the client; the
        // decoder refuses a 101 (no upgrade is ever asked for), so none of them changes what the
        // connection carries.
        listener.onInterim(this, resp);
        return;
      }
      originKeepAlive = HttpUtil.isKeepAlive(resp);
      listener.onResponseHead(this, resp);
    } else {
      listener.onResponseContent(this, (HttpContent) msg);
    }
  }

  @Override
  public void onOriginClosed() {
    if (isLive()) {
      fail(
          ProxyError.CONNECTION_TERMINATED,
          state() == State.WON ? "origin closed mid-response" : "origin closed before responding",
          Outcome.RESET);
    }
  }

  @Override
  public void onOriginException(Throwable cause) {
    if (isLive()) {
      fail(ProxyError.CONNECTION_TERMINATED, RequestChecks.describe(cause), Outcome.RESET);
    }
  }

  @Override
  public void onOriginWritabilityChanged(boolean writable) {
    if (isLive()) {
      listener.onOriginWritable(this, writable);
    }
  }

  private void fail(ProxyError e, String why, @Nullable Outcome ev) {
    failedWith(e, why, requireBreaker().keyText(), ev);
    listener.onAttemptFailed(this, ev);
  }

  private void failedWith(ProxyError e, String why, String about, @Nullable Outcome ev) {
    error = e;
    detail = why;
    scope = about;
    evidence = ev;
  }
}
