package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.FullHttpResponse;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Stale without waiting ({@code stale_on_slow} on a route): a request that holds a stored response
 * it could serve stale-if-error on a timeout does not wait out a slow origin. When the origin has
 * not started answering within {@code stale_on_slow}, the stale copy is answered now ({@code
 * Cache-Status: ...; detail="stale slow-origin"}); a request that leads the fetch lets it go on in
 * the background (its answer refreshes the entry, its failure counts on the breaker as always), a
 * request waiting for another's fetch leaves the flight.
 *
 * <p>Seed 001's "users get a 25 ms stale hit instead of a 504": without it, each stale answer
 * during a brownout waits for the origin's timeout first. The timer runs on the request's event
 * loop; the request path cancels it when the origin's head, an error or the client's departure
 * comes first.
 */
final class StaleOnSlow {
  private final ScheduledFuture<?> timer;

  private StaleOnSlow(ScheduledFuture<?> timer) {
    this.timer = timer;
  }

  /** Starts the timer for {@code c} when its route has one and its stored copy may serve. */
  static @Nullable StaleOnSlow start(CachingDownstream c) {
    long after = c.cs.edge().staleOnSlowNanos(c.routeId);
    CachedResponse e = c.stale();
    if (after <= 0 || e == null) {
      return null;
    }
    return new StaleOnSlow(c.eventLoop().schedule(() -> fire(c), after, TimeUnit.NANOSECONDS));
  }

  private static void fire(CachingDownstream c) {
    if (!c.awaitingOrigin()) {
      return;
    }
    CachedResponse e = c.stale();
    if (e == null) {
      return;
    }
    CacheServices cs = c.cs;
    long now = cs.ticker().read();
    if (cs.edge().policy().onError(e, StaleTrigger.TIMEOUT, now) != StaleDecision.SERVE_STALE) {
      return; // the copy may not be served (must-revalidate, too stale): wait for the origin
    }
    FullHttpResponse r =
        StoredAnswers.fromEntry(
            cs,
            e,
            c.clientHeaders(),
            c.head,
            now,
            cs.status()
                .fwd(CacheStatus.Fwd.STALE)
                .ttl(e.ttlSeconds(now))
                .detail("stale slow-origin"),
            true);
    c.staleOnSlow(r);
  }

  void cancel() {
    timer.cancel(false);
  }
}
