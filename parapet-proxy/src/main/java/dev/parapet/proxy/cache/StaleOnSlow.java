package dev.parapet.proxy.cache;

import dev.parapet.core.latency.AdaptiveWait;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponse;
import java.time.Duration;
import java.util.Set;
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
 *
 * <p>With {@code stale_on_slow: auto} (the default) the wait is the origin's own: twice the p95 of
 * its recent successful responses, at least 20 ms, at most the route's timeout ({@link
 * AdaptiveWait}). A waiting request that reaches the estimate (the p95, half its wait) unanswered
 * says so ({@link AdaptiveWait#onPastEstimate}); a run of five such requests with no answer in time
 * between marks the origin overdue, and so does a wait that runs out when another request has
 * reached the estimate unanswered too ({@link AdaptiveWait#onWaitRanOut}; one slow answer alone is
 * a healthy origin's tail). Overdue, the requests still waiting are answered then too (each on its
 * own loop), and later requests answer their copy at once, without waiting, until one of the
 * fetches going on behind those answers comes back within the healthy p95. So during a brownout
 * only the requests of its first moments wait, about the p95, as they do for an open breaker.
 *
 * <p>When the fetch's attempt fails and its retry waits past the timer (a backoff, the origin's
 * {@code Retry-After}), nothing can answer in time: the request, and every request waiting for the
 * same fetch, answers now what the timer would answer then ({@link #noAnswerBefore}).
 */
final class StaleOnSlow {
  private final CachingDownstream c;

  /** The origin's estimator, told when this wait runs out; null for a fixed or no wait. */
  private final @Nullable AdaptiveWait observed;

  /** The origin's waiting requests, this one among them as {@link #release}; or null. */
  private final @Nullable Set<Runnable> waiting;

  private final Runnable release = this::releaseFromAnyThread;
  private @Nullable ScheduledFuture<?> timer;

  /** With {@code auto}: what is left of the wait after the estimate, when that checkpoint runs. */
  private long afterCheckpoint = -1;

  /** When the wait runs out (the ticker's time). */
  private long dueNanos;

  private StaleOnSlow(
      CachingDownstream c, @Nullable AdaptiveWait observed, @Nullable Set<Runnable> waiting) {
    this.c = c;
    this.observed = observed;
    this.waiting = waiting;
  }

  /**
   * Starts the timer for {@code c} when its route has one and it holds a stored copy: the route's
   * fixed duration, or with {@code auto} its origin's {@link AdaptiveWait} capped at the route's
   * timeout — 0 while the origin is overdue, so the copy is answered at once.
   */
  static @Nullable StaleOnSlow start(CachingDownstream c) {
    CachedResponse e = c.stale();
    if (e == null) {
      return null;
    }
    Duration fixed = c.edge.staleOnSlow(c.routeId);
    StaleOnSlow s;
    long after;
    long now = c.cs.ticker().read();
    if (fixed != null) {
      after = fixed.toNanos();
      if (after <= 0) {
        return null;
      }
      s = new StaleOnSlow(c, null, null);
    } else {
      CachingDownstream.OriginWait o = c.originWait;
      if (o == null) {
        return null;
      }
      after = Math.min(o.capNanos(), o.latency().waitNanos(now));
      s = after > 0 ? new StaleOnSlow(c, o.latency(), o.waiting()) : new StaleOnSlow(c, null, null);
      long checkpoint = o.latency().estimateWaitNanos(now);
      if (after > 0 && checkpoint > 0 && checkpoint < after) {
        s.afterCheckpoint = after - checkpoint;
      }
    }
    s.dueNanos = now + after;
    if (s.afterCheckpoint >= 0) {
      after -= s.afterCheckpoint; // the first timer runs to the checkpoint
    }
    s.timer =
        c.eventLoop()
            .schedule(
                s.afterCheckpoint >= 0 ? s::checkpoint : s::fire, after, TimeUnit.NANOSECONDS);
    if (s.waiting != null) {
      s.waiting.add(s.release);
    }
    return s;
  }

  /**
   * With {@code stale_on_slow: auto}, while the origin is overdue and another request's fetch of
   * {@code k} is under way: the stale copy is answered now, as a waiter's zero wait would answer it
   * on the loop's next turn, without joining the flight or starting a timer (in a brownout that is
   * every request for the key while its fetch is out). True when answered.
   */
  static boolean answeredAtOnce(CachingDownstream c, CacheKey k) {
    CachedResponse e = c.stale();
    CachingDownstream.OriginWait o = c.originWait;
    if (e == null || o == null || c.edge.staleOnSlow(c.routeId) != null) {
      return false;
    }
    long now = c.cs.ticker().read();
    if (!o.latency().isOverdue(now) || !c.edge.collapser().inFlight(k)) {
      return false;
    }
    FullHttpResponse r = slowOriginAnswer(c, e, now);
    if (r == null) {
      return false;
    }
    c.answerWith(r, EdgeCache.Status.STALE, null);
    c.cs.count(EdgeCache.Status.STALE_ON_SLOW);
    return true;
  }

  /**
   * The stored copy {@code e} as the answer to a slow origin, or null when it may not be served
   * stale (must-revalidate, past its stale-if-error window): then the request waits for the origin.
   */
  private static @Nullable FullHttpResponse slowOriginAnswer(
      CachingDownstream c, CachedResponse e, long now) {
    if (c.edge.policy().onError(e, StaleTrigger.TIMEOUT, now) != StaleDecision.SERVE_STALE) {
      return null;
    }
    return StoredAnswers.slowOrigin(c.cs, e, c.clientHeaders(), c.head, now);
  }

  /**
   * The response head of {@code c}'s origin is the next tier's stale answer (its own {@code
   * Cache-Status} member, the last one, says {@code fwd=stale}): the origin behind it is failing or
   * slow. With {@code auto}, that makes this origin overdue as a wait running out would — an answer
   * the next tier gave after its own wait must not pass for a healthy one here.
   */
  static void onHead(CachingDownstream c, HttpResponse head) {
    CachingDownstream.OriginWait o = c.originWait;
    if (o == null || !lastMemberIsStale(head.headers().get(CacheStatus.FIELD))) {
      return;
    }
    if (o.latency().onOverdue(c.cs.ticker().read())) {
      o.waiting().forEach(Runnable::run);
    }
  }

  /** Whether the last member of a {@code Cache-Status} list has {@code fwd=stale}. */
  static boolean lastMemberIsStale(@Nullable String cacheStatus) {
    if (cacheStatus == null) {
      return false;
    }
    int start = 0;
    boolean quoted = false;
    for (int i = 0; i < cacheStatus.length(); i++) {
      char ch = cacheStatus.charAt(i);
      if (ch == '"' && (i == 0 || cacheStatus.charAt(i - 1) != '\\')) {
        quoted = !quoted;
      } else if (ch == ',' && !quoted) {
        start = i + 1;
      }
    }
    for (String param : cacheStatus.substring(start).split(";")) {
      if (param.trim().equals("fwd=stale")) {
        return true;
      }
    }
    return false;
  }

  /**
   * The request has waited the estimate (the origin's p95) unanswered, on its loop: one more of a
   * run; the run's last makes the origin overdue and answers now with the others, anyone else waits
   * the rest.
   */
  private void checkpoint() {
    Set<Runnable> w = waiting;
    AdaptiveWait o = observed;
    if (w == null || o == null || !w.contains(release) || !c.awaitingOrigin()) {
      return; // released already, or cancelled, or answered
    }
    if (o.onPastEstimate(c.cs.ticker().read())) {
      w.remove(release);
      w.forEach(Runnable::run);
      answerStale(c);
      return;
    }
    timer = c.eventLoop().schedule(this::fire, afterCheckpoint, TimeUnit.NANOSECONDS);
  }

  /** The wait ran out, on the request's loop. */
  private void fire() {
    Set<Runnable> w = waiting;
    if (w != null && !w.remove(release)) {
      return; // released already, or cancelled
    }
    if (!c.awaitingOrigin()) {
      return;
    }
    AdaptiveWait o = observed;
    if (o != null && w != null && o.onWaitRanOut(c.cs.ticker().read())) {
      // the origin did not answer within its healthy wait, nor another request within its p95:
      // it is slow now, for the others too
      w.forEach(Runnable::run);
    }
    answerStale(c);
  }

  /** When the wait runs out (the ticker's time). */
  long dueNanos() {
    return dueNanos;
  }

  /**
   * No answer can come before {@code atNanos} (the fetch's attempt failed and its retry waits until
   * then): when the wait runs out first, there is nothing to wait for, and the copy is answered now
   * (on the loop's next turn), as the timer would answer it. That is not the origin being slow past
   * its estimate, so {@link AdaptiveWait} hears nothing of it.
   */
  void noAnswerBefore(long atNanos) {
    ScheduledFuture<?> t = timer;
    if (t == null || atNanos - dueNanos < 0 || !t.cancel(false)) {
      return; // the retry may still answer in time, or the timer has run
    }
    timer = c.eventLoop().schedule(this::answerNow, 0, TimeUnit.NANOSECONDS);
  }

  private void answerNow() {
    Set<Runnable> w = waiting;
    if (w != null && !w.remove(release)) {
      return; // released already, or cancelled
    }
    if (c.awaitingOrigin()) {
      answerStale(c);
    }
  }

  /** Another request's wait made the origin overdue: answer now, on this request's loop. */
  private void releaseFromAnyThread() {
    c.eventLoop().execute(this::releasedEarly);
  }

  private void releasedEarly() {
    Set<Runnable> w = waiting;
    if (w == null || !w.remove(release)) {
      return; // its own timer fired first, or it was cancelled
    }
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
    if (c.awaitingOrigin()) {
      answerStale(c);
    }
  }

  private static void answerStale(CachingDownstream c) {
    CachedResponse e = c.stale();
    FullHttpResponse r = e == null ? null : slowOriginAnswer(c, e, c.cs.ticker().read());
    if (r != null) {
      c.staleOnSlow(r);
    }
  }

  void cancel() {
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
    Set<Runnable> w = waiting;
    if (w != null) {
      w.remove(release);
    }
  }
}
