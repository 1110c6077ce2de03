package dev.parapet.proxy.cache;

import dev.parapet.proxy.http.ProxyError;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import org.jspecify.annotations.Nullable;

/**
 * Why a collapsed fetch ended without a response to share: its waiters decide from it whether to
 * answer stale, answer the same error, or fetch for themselves. Stackless: a value on the request
 * path.
 */
final class FetchFailed extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The stale-if-error trigger, or null when the failure says nothing about the origin. */
  final transient @Nullable StaleTrigger trigger;

  /** The local error the leader answered, or null. */
  final transient @Nullable ProxyError error;

  final String detail;

  /** The leader's {@code Retry-After} in seconds (an open breaker's remaining time), or -1. */
  final long retryAfterSeconds;

  FetchFailed(
      @Nullable StaleTrigger trigger,
      @Nullable ProxyError error,
      String detail,
      long retryAfterSeconds) {
    super(detail, null, false, false);
    this.trigger = trigger;
    this.error = error;
    this.detail = detail;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /**
   * The leader's local error ({@link StaleTrigger#of} tells what it says about the origin), with
   * the {@code Retry-After} of the answer it got, if any (an open breaker's remaining time).
   */
  static FetchFailed local(ProxyError error, String detail, @Nullable FullHttpResponse answer) {
    return new FetchFailed(StaleTrigger.of(error), error, detail, retryAfter(answer));
  }

  /**
   * The leader's local error, answered by the cache instead of the proxy's own response, which was
   * never built: {@code retryAfterSeconds} is the {@code Retry-After} it would have had, or -1.
   */
  static FetchFailed local(ProxyError error, String detail, long retryAfterSeconds) {
    return new FetchFailed(StaleTrigger.of(error), error, detail, retryAfterSeconds);
  }

  /** The seconds of a local answer's {@code Retry-After}, or -1. */
  private static long retryAfter(@Nullable FullHttpResponse r) {
    String v = r == null ? null : r.headers().get(HttpHeaderNames.RETRY_AFTER);
    if (v == null) {
      return -1;
    }
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** A failure that says nothing about the origin: the waiters fetch for themselves. */
  static FetchFailed notShared(String detail) {
    return new FetchFailed(null, null, detail, -1);
  }
}
