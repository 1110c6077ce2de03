package dev.parapet.proxy.cache;

import dev.parapet.proxy.http.ProxyError;
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

  /** A failure that says nothing about the origin: the waiters fetch for themselves. */
  static FetchFailed notShared(String detail) {
    return new FetchFailed(null, null, detail, -1);
  }
}
