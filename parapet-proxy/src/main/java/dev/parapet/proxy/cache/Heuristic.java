package dev.parapet.proxy.cache;

/**
 * Heuristic freshness (RFC 9111 §4.2.2) for a response that states none, on one route: the route's
 * {@code default_ttl} when set, else a fraction of the time since the response's {@code
 * Last-Modified} ({@code Date − Last-Modified}), capped. Applies only to heuristically cacheable
 * statuses (RFC 9110 §15.1) or {@code public} responses, never when the response has {@code
 * max-age}, {@code s-maxage} or {@code Expires}.
 *
 * <p>The fraction is the usual one (§4.2.2 suggests "no more than some fraction", typically 10%): a
 * document unchanged for ten days is reused for one. The cap bounds how long a very old document
 * goes unvalidated.
 *
 * @param defaultTtlNanos the route's {@code default_ttl}; 0 for none
 * @param fraction {@code cache.heuristic.fraction}, in [0, 1]; 0 turns the Last-Modified heuristic
 *     off
 * @param maxNanos {@code cache.heuristic.max}: the largest heuristic lifetime
 */
public record Heuristic(long defaultTtlNanos, double fraction, long maxNanos) {
  /** No heuristic at all: a response without explicit freshness has lifetime 0. */
  public static final Heuristic NONE = new Heuristic(0, 0, 0);

  public Heuristic {
    if (defaultTtlNanos < 0 || maxNanos < 0 || !(fraction >= 0 && fraction <= 1)) {
      throw new IllegalArgumentException(
          "heuristic : "
              + defaultTtlNanos
              + "ns, "
              + fraction
              + ", "
              + maxNanos
              + "ns (expected: >= 0, in [0, 1], >= 0)");
    }
  }

  /** Only the route's {@code default_ttl}. */
  public static Heuristic defaultTtl(long defaultTtlNanos) {
    return defaultTtlNanos <= 0 ? NONE : new Heuristic(defaultTtlNanos, 0, 0);
  }

  /** The same with another route's {@code default_ttl}. */
  public Heuristic withDefaultTtl(long nanos) {
    return new Heuristic(Math.max(0, nanos), fraction, maxNanos);
  }

  /** True when the Last-Modified fraction is in use. */
  public boolean usesLastModified() {
    return fraction > 0 && maxNanos > 0;
  }

  /**
   * The heuristic lifetime of a response dated {@code dateMillis} and last modified at {@code
   * lastModifiedMillis} (or {@link dev.parapet.core.time.HttpDate#INVALID}): 0 when none applies.
   */
  long lifetimeNanos(long dateMillis, long lastModifiedMillis) {
    if (defaultTtlNanos > 0) {
      return defaultTtlNanos;
    }
    if (!usesLastModified()
        || lastModifiedMillis == dev.parapet.core.time.HttpDate.INVALID
        || lastModifiedMillis >= dateMillis) {
      return 0;
    }
    double since = (dateMillis - lastModifiedMillis) * 1_000_000.0;
    return (long) Math.min((double) maxNanos, since * fraction);
  }
}
