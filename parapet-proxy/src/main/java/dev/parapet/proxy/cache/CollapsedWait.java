package dev.parapet.proxy.cache;

import dev.parapet.proxy.http.ProxyError;
import io.netty.handler.codec.http.FullHttpResponse;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * A request waiting for another request's fetch of the same object (request collapsing): it hears
 * when the flight ends, on whatever thread ended it, hops to its own event loop, and decides there
 * how it goes on — the shared response if it matches its variant, a stale copy or the leader's
 * error when the fetch failed in a way that says so, or a fetch of its own (the response was not
 * shareable, another variant, the leader's client left).
 *
 * <p>The waiter has its own deadline, kept by its request: when that comes first it leaves the
 * flight ({@link CachingDownstream#stopWaiting}), and a wake already on its way does nothing.
 */
final class CollapsedWait implements Collapser.Waiter<CachedResponse> {
  /** The waiter of a flight nobody waits on (a refresh's own join). */
  static final Collapser.Waiter<CachedResponse> NOBODY =
      new Collapser.Waiter<>() {
        @Override
        public void onSuccess(CachedResponse value) {}

        @Override
        public void onFailure(Throwable cause) {}
      };

  private final CachingDownstream request;
  private final CachingDownstream.Resume resume;

  CollapsedWait(CachingDownstream request, CachingDownstream.Resume resume) {
    this.request = request;
    this.resume = resume;
  }

  @Override
  public void onSuccess(CachedResponse value) {
    hop(value, null);
  }

  @Override
  public void onFailure(Throwable cause) {
    hop(null, cause);
  }

  @Override
  public void onNoValueBefore(long atNanos) {
    try {
      request.delegate.eventLoop().execute(() -> request.flightEndsNoSoonerThan(atNanos));
    } catch (RejectedExecutionException e) {
      // the loop is shutting down: the client connection goes with it
    }
  }

  private void hop(@Nullable CachedResponse value, @Nullable Throwable cause) {
    try {
      request.delegate.eventLoop().execute(() -> woken(value, cause));
    } catch (RejectedExecutionException e) {
      // the loop is shutting down: the client connection goes with it
    }
  }

  private void woken(@Nullable CachedResponse value, @Nullable Throwable cause) {
    if (!request.stillWaiting()) {
      return;
    }
    CacheServices cs = request.cs;
    long now = cs.ticker().read();
    if (value != null && value.matchesVariant(request.clientHeaders())) {
      cs.count(EdgeCache.Status.COLLAPSED);
      resume.resume(
          StoredAnswers.fromEntry(
              cs,
              value,
              request.clientHeaders(),
              request.head,
              now,
              cs.status()
                  .fwd(request.fwd())
                  .fwdStatus(value.status())
                  .ttl(value.ttlSeconds(now))
                  .collapsed(),
              true));
      return;
    }
    if (cause instanceof FetchFailed f && f.trigger != null) {
      FullHttpResponse answer = StaleIfError.answer(request, f.trigger, f.error, f.detail, -1, now);
      ProxyError error = f.error;
      if (answer == null && error != null) {
        // The leader's answer, Retry-After included (an open breaker's remaining time).
        answer =
            cs.responses()
                .build(request.delegate.alloc(), error, f.detail, null, f.retryAfterSeconds);
        CacheStatus.addTo(answer.headers(), cs.status().fwd(request.fwd()).collapsed());
      }
      if (answer != null) {
        resume.resume(answer);
        return;
      }
    }
    resume.resume(null); // fetch for yourself, uncollapsed
  }
}
