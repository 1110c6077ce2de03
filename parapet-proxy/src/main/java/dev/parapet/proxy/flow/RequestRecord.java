package dev.parapet.proxy.flow;

import dev.parapet.proxy.cache.CachingDownstream;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.http1.HeaderList;
import dev.parapet.proxy.metrics.ProxyMetrics;
import dev.parapet.proxy.route.Route;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.AsciiString;
import io.opentelemetry.api.trace.Span;
import org.jspecify.annotations.Nullable;

/**
 * What names a request and what it leaves behind: its {@code X-Request-Id} (generated, or a trusted
 * peer's adopted for the request's lifetime), its span while traced, and, once it is answered, its
 * access-log line. The request's {@link RequestFlow} decides when; this records.
 *
 * <p>Confined to the request's event loop.
 */
final class RequestRecord {
  private static final AsciiString ID_HEADER = HeaderList.token(RequestIds.HEADER);

  private final ProxyContext px;
  private final Client from;
  private final String method;
  private final String target;
  private final long startNanos;
  private final boolean background;
  private final long requestId;

  /** The {@code X-Request-Id} as text, made when first asked for (a generated one is a number). */
  private @Nullable String idText;

  private boolean adoptedId;
  private @Nullable Span span;
  private int attempts;

  RequestRecord(
      ProxyContext px, Client from, HttpRequest request, long startNanos, boolean background) {
    this.px = px;
    this.from = from;
    this.method = request.method().name();
    this.target = request.uri();
    this.startNanos = startNanos;
    this.background = background;
    this.requestId = px.requestIds.next();
  }

  /** When the request's head arrived: its budget and its latency count from here. */
  long startNanos() {
    return startNanos;
  }

  /** The request target as the client sent it. */
  String target() {
    return target;
  }

  /** The core's number for this request (breaker permits, transition events). */
  long requestId() {
    return requestId;
  }

  /**
   * The request's {@code X-Request-Id}: a generated one is made a string here, once, for what needs
   * its text (a problem+json answer, the access log, tracing); the origin gets its digits without
   * one ({@link HeaderList#setId}).
   */
  String idText() {
    String t = idText;
    if (t == null) {
      t = RequestIds.format(requestId);
      idText = t;
    }
    return t;
  }

  /** The request's span while it is traced, else null. */
  @Nullable Span span() {
    return span;
  }

  /**
   * Sets the request's {@code X-Request-Id}: a trusted peer's is adopted (an untrusted peer's was
   * stripped already), otherwise the generated one is set, so the origin, the access log, a
   * problem+json answer and a breaker transition this request causes all name the same id.
   */
  void identify(HttpRequest request) {
    String incoming = request.headers().get(RequestIds.HEADER);
    if (incoming != null && px.requestIds.adopt(requestId, incoming)) {
      adoptedId = true;
      idText = incoming;
    } else if (request.headers() instanceof HeaderList h) {
      h.setId(ID_HEADER, requestId);
    } else {
      request.headers().set(ID_HEADER, idText());
    }
  }

  /** Opens the request's span when tracing is on. */
  void startSpan(HttpRequest request, String path) {
    if (px.tracing.enabled()) {
      span =
          px.tracing.startRequest(
              request.headers(), from.trustedBy(px.trustedPeers), method, path, idText());
    }
  }

  /** The exchange started attempt number {@code n}. */
  void attemptStarted(int n) {
    attempts = n;
    if (background && n == 1) {
      px.cacheServices.count(EdgeCache.Status.REFRESH);
    }
  }

  /** A background refresh ended: counted as skipped if it never reached the origin. */
  void backgroundEnded() {
    if (attempts == 0) {
      px.cacheServices.count(EdgeCache.Status.REFRESH_SKIPPED);
    }
    px.cache.backgroundDone();
  }

  /**
   * The request is answered with {@code status} ({@code error} the proxy's, or null): the adopted
   * id is let go and the access-log line written; the span is ended too unless {@code keepSpan}
   * (its end waits for what the cache's decorator makes of a local error).
   */
  void log(
      int status,
      @Nullable String error,
      long now,
      @Nullable Route route,
      @Nullable CachingDownstream cache,
      boolean keepSpan) {
    if (adoptedId) {
      adoptedId = false;
      px.requestIds.release(requestId);
    }
    if (!keepSpan) {
      endSpan(status, error, route, cache);
    }
    AccessLog log = px.accessLog;
    if (log != null && !background) {
      log.record(
          System.currentTimeMillis(),
          label(route),
          method,
          target,
          status,
          now - startNanos,
          attempts,
          error,
          from.ip(),
          idText());
    }
  }

  /** Ends the request's span, with what the client got ({@link Tracing#endRequest}). */
  void endSpan(
      int status,
      @Nullable String error,
      @Nullable Route route,
      @Nullable CachingDownstream cache) {
    Span s = span;
    span = null;
    if (s != null) {
      Tracing.endRequest(s, route == null ? null : route.id(), status, error, cache);
    }
  }

  /** The route's id for metrics and the log, or {@link ProxyMetrics#NO_ROUTE}. */
  static String label(@Nullable Route route) {
    return route == null ? ProxyMetrics.NO_ROUTE : route.id();
  }
}
