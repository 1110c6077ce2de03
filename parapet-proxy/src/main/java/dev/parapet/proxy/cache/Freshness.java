package dev.parapet.proxy.cache;

import dev.parapet.core.time.HttpDate;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.List;

/**
 * Freshness lifetime and age (RFC 9111 §4.2), as pure functions of header values and times.
 *
 * <p>Lifetime (§4.2.1), first that applies: {@code s-maxage} (this is a shared cache), {@code
 * max-age}, {@code Expires − Date}, then a {@link Heuristic} (§4.2.2: the route's {@code
 * default_ttl}, else a fraction of {@code Date − Last-Modified}, capped), used only for
 * heuristically cacheable statuses or {@code public} responses; else 0. An {@code Expires} that is
 * invalid (including {@code 0}) or repeated means already expired (§5.3, §4.2.1).
 *
 * <p>Age (§4.2.3), computed once when the response is received, with the wall clock only where the
 * RFC compares against {@code Date} and the monotonic clock for everything measured locally:
 *
 * <pre>
 *   apparent_age          = max(0, response_time(wall) − date_value)
 *   response_delay        = response_time(mono) − request_time(mono)
 *   corrected_age_value   = age_value + response_delay
 *   corrected_initial_age = max(apparent_age, corrected_age_value)
 *   current_age(now)      = corrected_initial_age + (now(mono) − response_time(mono))
 * </pre>
 *
 * An invalid {@code Age} is ignored; of a list the first member counts (§5.1).
 */
public final class Freshness {
  private static final long NANOS_PER_SECOND = 1_000_000_000L;
  private static final long NANOS_PER_MILLI = 1_000_000L;

  private Freshness() {}

  /**
   * True for the statuses RFC 9110 §15.1 calls heuristically cacheable: 200, 203, 204, 206, 300,
   * 301, 308, 404, 405, 410, 414, 501.
   */
  public static boolean isHeuristicallyCacheable(int status) {
    return switch (status) {
      case 200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501 -> true;
      default -> false;
    };
  }

  /** True when the response states its own freshness: s-maxage, max-age or Expires. */
  public static boolean hasExplicitFreshness(CacheControl cc, HttpHeaders headers) {
    return cc.sMaxAge() != CacheControl.ABSENT
        || cc.maxAge() != CacheControl.ABSENT
        || (!cc.targeted() && headers.contains(HttpHeaderNames.EXPIRES));
  }

  /** The freshness lifetime with only a route's {@code default_ttl} as heuristic. */
  public static long lifetimeNanos(
      int status,
      CacheControl cc,
      HttpHeaders headers,
      long dateMillis,
      long nowEpochMillis,
      long defaultTtlNanos) {
    return lifetimeNanos(
        status, cc, headers, dateMillis, nowEpochMillis, Heuristic.defaultTtl(defaultTtlNanos));
  }

  /**
   * True when {@code heuristic} gives this response a lifetime (it states none of its own).
   *
   * @param nowEpochMillis wall clock, only for parsing two-digit years
   */
  public static boolean hasHeuristicFreshness(
      int status, CacheControl cc, HttpHeaders headers, Heuristic heuristic, long nowEpochMillis) {
    if (!(isHeuristicallyCacheable(status) || cc.isPublic())) {
      return false;
    }
    if (heuristic.defaultTtlNanos() > 0) {
      return true;
    }
    if (!heuristic.usesLastModified()) {
      return false;
    }
    long lm = HttpDate.parseAnyCase(headers.get(HttpHeaderNames.LAST_MODIFIED), nowEpochMillis);
    long date = HttpDate.parseAnyCase(headers.get(HttpHeaderNames.DATE), nowEpochMillis);
    if (date == HttpDate.INVALID) {
      date = nowEpochMillis;
    }
    return heuristic.lifetimeNanos(date, lm) > 0;
  }

  /**
   * The freshness lifetime in nanoseconds (never negative).
   *
   * @param dateMillis the response's Date (or its receipt time when it had none), epoch millis
   * @param nowEpochMillis wall clock, only for parsing a two-digit-year Expires
   * @param heuristic the route's heuristic, for a response that states no freshness
   */
  public static long lifetimeNanos(
      int status,
      CacheControl cc,
      HttpHeaders headers,
      long dateMillis,
      long nowEpochMillis,
      Heuristic heuristic) {
    if (cc.sMaxAge() != CacheControl.ABSENT) {
      return seconds(cc.sMaxAge());
    }
    if (cc.maxAge() != CacheControl.ABSENT) {
      return seconds(cc.maxAge());
    }
    List<String> expires =
        cc.targeted() ? List.of() : headers.getAll(HttpHeaderNames.EXPIRES); // RFC 9213 §2.2
    if (!expires.isEmpty()) {
      if (expires.size() > 1) {
        return 0; // two Expires: treat as stale (§4.2.1)
      }
      long exp = HttpDate.parseAnyCase(expires.get(0), nowEpochMillis);
      if (exp == HttpDate.INVALID) {
        return 0; // invalid, including "0": a time in the past (§5.3)
      }
      return Math.max(0, exp - dateMillis) * NANOS_PER_MILLI;
    }
    if (isHeuristicallyCacheable(status) || cc.isPublic()) {
      long lm = HttpDate.parseAnyCase(headers.get(HttpHeaderNames.LAST_MODIFIED), nowEpochMillis);
      return heuristic.lifetimeNanos(dateMillis, lm);
    }
    return 0;
  }

  /**
   * {@code corrected_initial_age} in nanoseconds (see the class comment).
   *
   * @param ageHeader the response's Age value, or null
   * @param dateMillis the response's Date, epoch millis
   * @param requestNanos monotonic time the request was sent
   * @param responseNanos monotonic time the response was received
   * @param responseEpochMillis wall-clock time the response was received
   */
  public static long initialAgeNanos(
      @org.jspecify.annotations.Nullable String ageHeader,
      long dateMillis,
      long requestNanos,
      long responseNanos,
      long responseEpochMillis) {
    long apparent = Math.max(0, responseEpochMillis - dateMillis) * NANOS_PER_MILLI;
    long ageValue = parseAgeSeconds(ageHeader);
    long delay = Math.max(0, responseNanos - requestNanos);
    long corrected = (ageValue < 0 ? 0 : seconds(ageValue)) + delay;
    return Math.max(apparent, corrected);
  }

  /** The Age header's seconds (first list member), or -1 when absent or invalid (§5.1). */
  public static long parseAgeSeconds(@org.jspecify.annotations.Nullable String value) {
    if (value == null) {
      return -1;
    }
    int end = value.indexOf(',');
    String first = (end < 0 ? value : value.substring(0, end)).trim();
    if (first.isEmpty()) {
      return -1;
    }
    long v = 0;
    for (int i = 0; i < first.length(); i++) {
      char c = first.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = Math.min(CacheControl.MAX_DELTA_SECONDS, v * 10 + (c - '0'));
    }
    return v;
  }

  /**
   * Cache-Status {@code ttl} (RFC 9211 §2.3): remaining freshness in whole seconds, negative when
   * stale; rounded toward negative infinity so a response 0.5 s past freshness reads -1, not 0.
   */
  public static long ttlSeconds(long lifetimeNanos, long currentAgeNanos) {
    return Math.floorDiv(lifetimeNanos - currentAgeNanos, NANOS_PER_SECOND);
  }

  static long seconds(long s) {
    return s >= Long.MAX_VALUE / NANOS_PER_SECOND ? Long.MAX_VALUE / 2 : s * NANOS_PER_SECOND;
  }
}
