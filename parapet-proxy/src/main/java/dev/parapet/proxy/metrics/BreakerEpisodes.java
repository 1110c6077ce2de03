package dev.parapet.proxy.metrics;

import dev.parapet.core.breaker.State;
import dev.parapet.core.time.Ticker;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long each breaker has kept its origin away from traffic: the {@code
 * parapet_breaker_open_seconds} gauge behind the "open for more than 5 minutes" alert (seed 004:
 * "we alert on circuits that stay open longer than 5 minutes — that's often a sign the threshold is
 * correct but the origin needs human intervention").
 *
 * <p>An episode starts when a breaker enters {@code OPEN} or {@code FORCED_OPEN} and none is
 * running; half-open probes and re-opens after a failed probe continue it, because traffic still
 * does not flow; it ends when the breaker enters {@code RAMPING}, {@code CLOSED} or {@code
 * DISABLED}, when traffic flows again. The gauge reads the injected ticker, so it grows between
 * transitions, and is 0 outside an episode.
 *
 * <p>Transitions of one breaker reach {@link #transition} from the thread whose state change won,
 * one at a time per breaker in practice; the start time is a single volatile long per breaker.
 */
final class BreakerEpisodes {
  /** No episode is running. A start time equal to it is moved by one nanosecond. */
  private static final long NONE = Long.MIN_VALUE;

  private final Ticker ticker;
  private final Map<String, Episode> byBreaker = new ConcurrentHashMap<>();

  private static final class Episode {
    volatile long since = NONE;
  }

  BreakerEpisodes(Ticker ticker) {
    this.ticker = ticker;
  }

  /** The breaker {@code key} entered {@code to} at {@code nowNanos}. */
  void transition(String key, State to, long nowNanos) {
    Episode e = byBreaker.computeIfAbsent(key, k -> new Episode());
    switch (to) {
      case OPEN, FORCED_OPEN -> {
        if (e.since == NONE) {
          e.since = nowNanos == NONE ? nowNanos + 1 : nowNanos;
        }
      }
      case RAMPING, CLOSED, DISABLED -> e.since = NONE;
      case HALF_OPEN -> {
        // probing: traffic still does not flow, the episode goes on
      }
    }
  }

  /**
   * A breaker was created (in {@code state}), replacing any of the same key: its episode is new.
   */
  void started(String key, State state) {
    byBreaker.computeIfAbsent(key, k -> new Episode()).since = NONE;
    transition(key, state, ticker.read());
  }

  /** Seconds since breaker {@code key}'s episode started, 0 when none is running. */
  double openSeconds(String key) {
    Episode e = byBreaker.get(key);
    long since = e == null ? NONE : e.since;
    if (since == NONE) {
      return 0;
    }
    return Math.max(0, ticker.read() - since) / 1e9;
  }
}
