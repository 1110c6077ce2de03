package dev.parapet.proxy.cache;

import io.netty.handler.codec.http.HttpHeaders;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * May a stored response that is not fresh be served now? RFC 9111 §4.2.4: a cache "MUST NOT
 * generate a stale response unless it is disconnected or doing so is explicitly permitted by the
 * client or origin server". So stale is served only when someone permitted it:
 *
 * <ul>
 *   <li>the client: {@code max-stale} (§5.2.1.2);
 *   <li>the origin: {@code stale-while-revalidate} / {@code stale-if-error} (RFC 5861) in the
 *       response;
 *   <li>the operator: {@code cache.stale_while_revalidate} (0 s by default: never unless set) and
 *       {@code cache.stale_if_error} for the failures listed in {@code cache.stale_if_error_on} (by
 *       default those where the origin could not be asked or did not answer — "disconnected"; an
 *       origin's own 5xx only when {@code 5xx} is listed).
 * </ul>
 *
 * Never when the response forbids it: {@code must-revalidate}, {@code proxy-revalidate}, {@code
 * s-maxage} (implies proxy-revalidate, §5.2.2.10) or an unqualified {@code no-cache} — whatever the
 * client, the origin's stale directives or the operator say.
 *
 * <p><b>Before going to the origin</b> ({@link #beforeOrigin}), for a {@link Lookup.Kind#STALE}
 * result: the request's own {@code no-cache}, {@code max-age} or {@code min-fresh} the entry fails
 * means {@link StaleDecision#REVALIDATE}; within {@code max-stale} the entry is served as is;
 * within stale-while-revalidate it is served and refreshed in the background; beyond both the
 * request waits for the origin — or, with {@code only-if-cached} (§5.2.1.7), gets 504.
 *
 * <p><b>After the origin failed</b> ({@link #onError}), or could not be tried: within the
 * stale-if-error window for that trigger the entry is served. A response that forbids stale use is
 * never served: where the origin answered (5xx) its answer is forwarded ({@link
 * StaleDecision#PASS_ERROR}); where it could not be reached, 504 ({@link
 * StaleDecision#GATEWAY_TIMEOUT}, §5.2.2.2).
 *
 * <p>A response's directive wins over the operator's window in both directions (an origin's {@code
 * stale-if-error=0} disables it for that response). Windows are measured from the end of freshness.
 * Immutable; safe to share.
 */
public final class StalePolicy {
  private final long staleWhileRevalidateNanos;
  private final long staleIfErrorNanos;
  private final Set<StaleTrigger> staleIfErrorOn;

  /** Operator windows that apply to every trigger (tests, embedding). */
  public StalePolicy(Duration staleWhileRevalidate, Duration staleIfError) {
    this(staleWhileRevalidate, staleIfError, EnumSet.allOf(StaleTrigger.class));
  }

  /**
   * @param staleWhileRevalidate {@code cache.stale_while_revalidate} (0 s by default)
   * @param staleIfError {@code cache.stale_if_error} (300 s by default)
   * @param staleIfErrorOn {@code cache.stale_if_error_on}: the failures the operator's window
   *     covers ({@link StaleTrigger#UNREACHABLE} by default); an incident always is
   */
  public StalePolicy(
      Duration staleWhileRevalidate, Duration staleIfError, Set<StaleTrigger> staleIfErrorOn) {
    if (staleWhileRevalidate.isNegative() || staleIfError.isNegative()) {
      throw new IllegalArgumentException(
          "stale windows : " + staleWhileRevalidate + ", " + staleIfError + " (expected: >= 0)");
    }
    this.staleWhileRevalidateNanos = staleWhileRevalidate.toNanos();
    this.staleIfErrorNanos = staleIfError.toNanos();
    EnumSet<StaleTrigger> on = EnumSet.noneOf(StaleTrigger.class);
    on.addAll(staleIfErrorOn);
    on.add(StaleTrigger.INCIDENT);
    this.staleIfErrorOn = Collections.unmodifiableSet(on);
  }

  /** The decision for a {@link Lookup.Kind#STALE} lookup before any origin attempt. */
  public StaleDecision beforeOrigin(Lookup lookup, HttpHeaders requestHeaders) {
    CachedResponse e = lookup.requireEntry();
    CacheControl req = CacheControl.of(requestHeaders);
    long age = lookup.currentAgeNanos();
    long remaining = e.lifetimeNanos() - age;
    if (e.cacheControl().forbidsStale()
        || req.noCache()
        || (req.maxAge() != CacheControl.ABSENT && age > Freshness.seconds(req.maxAge()))
        || (req.minFresh() != CacheControl.ABSENT
            && remaining < Freshness.seconds(req.minFresh()))) {
      // only-if-cached (§5.2.1.7): the client takes a stored response or 504, never the origin
      return req.onlyIfCached() ? StaleDecision.GATEWAY_TIMEOUT : StaleDecision.REVALIDATE;
    }
    long staleness = lookup.stalenessNanos();
    if (req.maxStale() != CacheControl.ABSENT && staleness <= Freshness.seconds(req.maxStale())) {
      return StaleDecision.SERVE_STALE;
    }
    if (staleness <= staleWhileRevalidateNanos(e)) {
      return StaleDecision.REVALIDATE_IN_BACKGROUND;
    }
    return req.onlyIfCached() ? StaleDecision.GATEWAY_TIMEOUT : StaleDecision.REVALIDATE;
  }

  /**
   * The decision once the origin failed or could not be tried.
   *
   * @param entry the stored response for this request
   * @param trigger what went wrong
   * @param nowNanos monotonic now
   */
  public StaleDecision onError(CachedResponse entry, StaleTrigger trigger, long nowNanos) {
    if (entry.cacheControl().forbidsStale()) {
      return trigger.originAnswered() ? StaleDecision.PASS_ERROR : StaleDecision.GATEWAY_TIMEOUT;
    }
    long window = staleIfErrorNanos(entry, trigger);
    if (window >= 0 && entry.stalenessNanos(nowNanos) <= window) {
      return StaleDecision.SERVE_STALE;
    }
    return StaleDecision.PASS_ERROR;
  }

  /** The stale-while-revalidate window for this entry. */
  public long staleWhileRevalidateNanos(CachedResponse e) {
    long directive = e.cacheControl().staleWhileRevalidate();
    return directive == CacheControl.ABSENT
        ? staleWhileRevalidateNanos
        : Freshness.seconds(directive);
  }

  /**
   * The stale-if-error window for this entry and trigger: the response's directive, else the
   * operator's when {@code cache.stale_if_error_on} lists the trigger, else -1 (none).
   */
  public long staleIfErrorNanos(CachedResponse e, StaleTrigger trigger) {
    long directive = e.cacheControl().staleIfError();
    if (directive != CacheControl.ABSENT) {
      return Freshness.seconds(directive);
    }
    return staleIfErrorOn.contains(trigger) ? staleIfErrorNanos : -1;
  }
}
