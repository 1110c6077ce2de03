package dev.parapet.core.breaker;

import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Breakers by key, bounded in number (seed 000: breakers "per PoP, per origin hostname, and
 * sometimes per URL pattern"; seed 004: per hash shard).
 *
 * <p>How it works: lookups are one {@link ConcurrentHashMap#get}. Creating a breaker when the
 * registry is full first evicts, in one scan, every breaker that is CLOSED and idle for at least
 * {@code idleAfter}; an OPEN, HALF_OPEN, RAMPING, FORCED_OPEN or DISABLED breaker is never evicted,
 * because forgetting it would forget that its origin is sick (or an operator's decision). When
 * nothing can be evicted, the key gets its scope's shared overflow breaker rather than an unbounded
 * map or a failed request: protection stays on, coarser, and {@link #overflowCount()} says so.
 *
 * <p>Keys come from configuration (routes, origins, hosts, shard numbers), not from request data.
 */
public final class BreakerRegistry {
  private final int maxBreakers;
  private final long idleAfterNanos;
  private final Function<BreakerKey, CircuitBreaker> factory;
  private final ConcurrentHashMap<BreakerKey, CircuitBreaker> breakers = new ConcurrentHashMap<>();
  private final Map<Scope, CircuitBreaker> overflow = new EnumMap<>(Scope.class);
  private final ReentrantLock creation = new ReentrantLock();
  private final LongAdder evictions = new LongAdder();
  private final LongAdder overflows = new LongAdder();

  /**
   * @param maxBreakers at most this many breakers, not counting the overflow breakers
   * @param idleAfter a CLOSED breaker with no admission for this long may be evicted
   * @param factory makes the breaker for a key (policy, listener, ticker reading at creation)
   */
  public BreakerRegistry(
      int maxBreakers, Duration idleAfter, Function<BreakerKey, CircuitBreaker> factory) {
    if (maxBreakers < 1) {
      throw new IllegalArgumentException("max_breakers : " + maxBreakers + " (expected: >= 1)");
    }
    this.maxBreakers = maxBreakers;
    this.idleAfterNanos = Durations.positiveNanos("idle_after", idleAfter);
    this.factory = Objects.requireNonNull(factory, "factory");
  }

  /** The breaker for {@code key}, created if needed (see the class comment when full). */
  public CircuitBreaker get(BreakerKey key, long nowNanos) {
    CircuitBreaker b = breakers.get(key);
    return b != null ? b : create(key, nowNanos);
  }

  /** The breaker for {@code key} if it exists. */
  public @Nullable CircuitBreaker find(BreakerKey key) {
    return breakers.get(key);
  }

  /** All breakers (not the overflow ones), in no particular order. */
  public Collection<CircuitBreaker> all() {
    return List.copyOf(breakers.values());
  }

  /** Overflow breakers that have been used. */
  public Collection<CircuitBreaker> overflowBreakers() {
    creation.lock();
    try {
      return List.copyOf(overflow.values());
    } finally {
      creation.unlock();
    }
  }

  /** Number of breakers held (not counting overflow breakers). */
  public int size() {
    return breakers.size();
  }

  /** Breakers evicted so far. */
  public long evictionCount() {
    return evictions.sum();
  }

  /** Lookups answered with an overflow breaker because nothing could be evicted. */
  public long overflowCount() {
    return overflows.sum();
  }

  /** Removes the breaker for {@code key} whatever its state (configuration reload dropped it). */
  public @Nullable CircuitBreaker remove(BreakerKey key) {
    return breakers.remove(key);
  }

  private CircuitBreaker create(BreakerKey key, long now) {
    creation.lock();
    try {
      CircuitBreaker existing = breakers.get(key);
      if (existing != null) {
        return existing;
      }
      if (breakers.size() >= maxBreakers && evictIdle(now) == 0) {
        overflows.increment();
        return overflow.computeIfAbsent(
            key.scope(), scope -> factory.apply(BreakerKey.of(scope, "overflow")));
      }
      CircuitBreaker b = factory.apply(key);
      breakers.put(key, b);
      return b;
    } finally {
      creation.unlock();
    }
  }

  /** Evicts every CLOSED breaker idle for at least idleAfter; returns how many. */
  private int evictIdle(long now) {
    List<BreakerKey> idle = new ArrayList<>();
    for (Map.Entry<BreakerKey, CircuitBreaker> e : breakers.entrySet()) {
      CircuitBreaker b = e.getValue();
      if (b.state() == State.CLOSED && now - b.lastActiveNanos() >= idleAfterNanos) {
        idle.add(e.getKey());
      }
    }
    int evicted = 0;
    for (BreakerKey k : idle) {
      CircuitBreaker b = breakers.get(k);
      // Re-check: it may have opened between the scan and now.
      if (b != null && b.state() == State.CLOSED && breakers.remove(k, b)) {
        evicted++;
      }
    }
    evictions.add(evicted);
    return evicted;
  }
}
