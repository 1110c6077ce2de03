package dev.parapet.proxy.flow;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Requests in flight per client address, capped at {@code admission.per_client.max_inflight}: one
 * client (a scraper, a retry loop) cannot take the whole concurrency limit from everybody else.
 * Beyond the cap the proxy answers 429 — the client, not the origin, is over its limit (seed 003:
 * "429 when it's a tenant or client limit").
 *
 * <p>A map of counters that holds only clients with requests in flight (an entry is removed when
 * its count returns to zero), so its size is bounded by the open connections. Hand-written: a keyed
 * counter with removal at zero is a few lines over {@link ConcurrentHashMap#compute}, and no
 * library in the build offers it.
 */
public final class ClientLimits {
  private final int max;
  private final ConcurrentHashMap<InetAddress, int[]> inflight = new ConcurrentHashMap<>();

  /**
   * @param max requests per client address at once; 0 switches the limit off
   */
  public ClientLimits(int max) {
    this.max = max;
  }

  public int max() {
    return max;
  }

  boolean enabled() {
    return max > 0;
  }

  /** Takes a slot for {@code client}; false when it already has {@code max} in flight. */
  boolean tryAcquire(@Nullable InetAddress client) {
    if (max <= 0 || client == null) {
      return true;
    }
    boolean[] ok = new boolean[1];
    inflight.compute(
        client,
        (k, count) -> {
          int[] c = count == null ? new int[1] : count;
          if (c[0] < max) {
            c[0]++;
            ok[0] = true;
          }
          return c;
        });
    return ok[0];
  }

  /** Returns a slot taken by {@link #tryAcquire}. */
  void release(@Nullable InetAddress client) {
    if (max <= 0 || client == null) {
      return;
    }
    inflight.computeIfPresent(client, (k, c) -> --c[0] <= 0 ? null : c);
  }

  /** Clients with requests in flight now. */
  public int clients() {
    return inflight.size();
  }
}
