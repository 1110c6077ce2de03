package dev.parapet.core.balance;

import dev.parapet.core.time.RandomSource;
import org.jspecify.annotations.Nullable;

/**
 * Least request by the power of two choices (Mitzenmacher, "The Power of Two Choices in Randomized
 * Load Balancing", 2001; Envoy's {@code LEAST_REQUEST} with {@code choice_count: 2}): draw two
 * distinct available hosts at random and send the request to the one with fewer requests in flight
 * per unit of effective weight, {@code (active + 1) / (weight × slowStartFactor)}. Two random
 * probes avoid the herd behaviour of a global minimum (every proxy piling onto the same idle host)
 * while still steering away from loaded or slow hosts.
 *
 * <p>Candidates are drawn with the injected {@link RandomSource}; an ejected draw is redrawn a few
 * times and then replaced by a scan from a random start, so ejected hosts are never picked and the
 * cost stays O(1) while most hosts are available.
 */
public final class LeastRequestBalancer implements LoadBalancer {
  private static final int REDRAWS = 8;

  private final SlowStart slowStart;
  private final RandomSource random;
  private volatile HostSet hosts;

  public LeastRequestBalancer(HostSet hosts, SlowStart slowStart, RandomSource random) {
    this.slowStart = slowStart;
    this.random = random;
    this.hosts = hosts;
  }

  @Override
  public @Nullable Host pick(long nowNanos, long key) {
    HostSet set = hosts;
    int n = set.size();
    if (n == 0) {
      return null;
    }
    HostHealth health = set.health();
    int a = draw(set, health, -1);
    if (a < 0) {
      return null;
    }
    int b = n == 1 ? -1 : draw(set, health, a);
    if (b < 0) {
      return set.get(a);
    }
    Host ha = set.get(a);
    Host hb = set.get(b);
    double wa = ha.weight() * slowStart.factor(health, a, nowNanos);
    double wb = hb.weight() * slowStart.factor(health, b, nowNanos);
    // a wins when (activeA + 1) / wa <= (activeB + 1) / wb, cross-multiplied to avoid division.
    return (ha.activeRequests() + 1.0) * wb <= (hb.activeRequests() + 1.0) * wa ? ha : hb;
  }

  /** A random available index other than {@code exclude}, or -1 when there is none. */
  private int draw(HostSet set, HostHealth health, int exclude) {
    int n = set.size();
    int bound = exclude < 0 ? n : n - 1;
    for (int attempt = 0; attempt < REDRAWS; attempt++) {
      int i = (int) random.nextLong(bound);
      if (exclude >= 0 && i >= exclude) {
        i++;
      }
      if (!health.isEjected(i)) {
        return i;
      }
    }
    int start = (int) random.nextLong(n);
    for (int k = 0; k < n; k++) {
      int i = start + k < n ? start + k : start + k - n;
      if (i != exclude && !health.isEjected(i)) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public void update(HostSet hosts) {
    this.hosts = hosts;
  }

  @Override
  public HostSet hosts() {
    return hosts;
  }
}
