package dev.parapet.proxy.cache;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Request collapsing: concurrent misses for one key make one origin fetch (DESIGN "Cache"; seed
 * 000: a breaking "collapsed forwarding" synchronizes load on the origin).
 *
 * <p>How it works. {@link #join} atomically (one {@code ConcurrentHashMap.compute} per key) either
 * starts a flight — the caller is its {@link Role#LEADER} and fetches — or adds the caller's {@link
 * Waiter} to the flight in progress ({@link Role#WAITER}). The leader ends the flight exactly once
 * with {@link Flight#complete} or {@link Flight#fail}; every waiter's callback then runs on the
 * completing thread (the request path hops to the waiter's own event loop from there). Nobody polls
 * and nobody blocks. A flight that ended is removed from the map before its waiters are called, so
 * a later miss starts a new flight instead of joining a finished one.
 *
 * <p>Bounds. At most {@code maxWaitersPerKey} waiters join one flight; the next caller gets {@link
 * Role#OVERFLOW} and goes to the origin itself, uncollapsed. It is not refused here because the
 * breaker and admission control already bound what reaches the origin, and a hot key is the one
 * whose clients most need an answer; a route that prefers failing can answer 503 on OVERFLOW. A
 * waiter whose client leaves (or whose deadline fires) calls {@link Ticket#cancel} and frees its
 * slot.
 *
 * <p>Failure. {@link Flight#fail} releases every waiter with the cause, so each can fall back to a
 * stale entry or an error on its own; the same goes for a response that turns out not to be
 * shareable (the leader fails the flight with a cause that says so, and the waiters fetch for
 * themselves). Keyed by the primary {@link CacheKey}, a flight ignores {@code Vary}: a waiter
 * checks {@link CachedResponse#matchesVariant} on what it receives and fetches for itself when its
 * request varies differently. The leader must end the flight on every path, its client leaving
 * included. Completing twice is a no-op that returns false and is counted as misuse.
 */
public final class Collapser<K, V> {
  /** What {@link #join} made of the caller. */
  public enum Role {
    /** Fetch from the origin, then end the flight. */
    LEADER,
    /** Wait for the callback; nothing to do now. */
    WAITER,
    /** Too many waiters on this key: go to the origin without collapsing. */
    OVERFLOW
  }

  /**
   * Callbacks of one waiter: {@link #onSuccess} or {@link #onFailure} once, on the thread that ends
   * the flight; {@link #onNoValueBefore} any number of times before that, on the leader's thread.
   */
  public interface Waiter<V> {
    void onSuccess(V value);

    void onFailure(Throwable cause);

    /**
     * The leader knows its fetch cannot end before {@code atNanos} (its ticker's time): its attempt
     * failed and the retry waits until then. The flight goes on; this default ignores it.
     */
    default void onNoValueBefore(long atNanos) {}
  }

  private final ConcurrentHashMap<K, Flight<K, V>> flights = new ConcurrentHashMap<>();
  private final int maxWaitersPerKey;
  private final LongAdder collapsed = new LongAdder();
  private final LongAdder overflows = new LongAdder();
  private final LongAdder misuse = new LongAdder();

  /**
   * @param maxWaitersPerKey waiters allowed on one flight, besides its leader; at least 1
   */
  public Collapser(int maxWaitersPerKey) {
    if (maxWaitersPerKey < 1) {
      throw new IllegalArgumentException(
          "maxWaitersPerKey : " + maxWaitersPerKey + " (expected: >= 1)");
    }
    this.maxWaitersPerKey = maxWaitersPerKey;
  }

  /**
   * Joins the flight for {@code key}, or starts it.
   *
   * @param waiter called when the flight ends, if the caller becomes a {@link Role#WAITER}
   */
  public Ticket<K, V> join(K key, Waiter<V> waiter) {
    Object[] result = new Object[1];
    flights.compute(
        key,
        (k, current) -> {
          if (current != null) {
            int added = current.tryAdd(waiter, maxWaitersPerKey);
            if (added == Flight.ADDED) {
              result[0] = new Ticket<>(Role.WAITER, current, waiter);
              return current;
            }
            if (added == Flight.FULL) {
              result[0] = new Ticket<>(Role.OVERFLOW, null, waiter);
              return current;
            }
            // ended but not yet removed: start a new flight
          }
          Flight<K, V> started = new Flight<>(this, k);
          result[0] = new Ticket<>(Role.LEADER, started, waiter);
          return started;
        });
    @SuppressWarnings("unchecked")
    Ticket<K, V> ticket = (Ticket<K, V>) result[0];
    if (ticket.role == Role.WAITER) {
      collapsed.increment();
    } else if (ticket.role == Role.OVERFLOW) {
      overflows.increment();
    }
    return ticket;
  }

  /**
   * True while a fetch for {@code key} is in flight (e.g. a background refresh already running).
   */
  public boolean inFlight(K key) {
    return flights.containsKey(key);
  }

  /** Flights in progress. */
  public int flightCount() {
    return flights.size();
  }

  /** Requests that joined a flight as waiters, since creation. */
  public long collapsedTotal() {
    return collapsed.sum();
  }

  /** Requests told to go to the origin themselves because a flight was full. */
  public long overflowTotal() {
    return overflows.sum();
  }

  /** Flights ended more than once (a bug in the caller). */
  public long misuseTotal() {
    return misuse.sum();
  }

  /**
   * What one caller got from {@link #join}. The leader ends the flight through {@link #flight()}; a
   * waiter may {@link #cancel} to leave it.
   */
  public static final class Ticket<K, V> {
    private final Role role;
    private final @Nullable Flight<K, V> flight;
    private final Waiter<V> waiter;

    Ticket(Role role, @Nullable Flight<K, V> flight, Waiter<V> waiter) {
      this.role = role;
      this.flight = flight;
      this.waiter = waiter;
    }

    public Role role() {
      return role;
    }

    /** The flight this leader must end. */
    public Flight<K, V> flight() {
      Flight<K, V> f = flight;
      if (role != Role.LEADER || f == null) {
        throw new IllegalStateException("ticket role : " + role + " (expected: LEADER)");
      }
      return f;
    }

    /**
     * Whether the flight goes on and its leader said its fetch cannot end before {@code atNanos} or
     * later ({@link Flight#noValueBefore(long)}).
     */
    public boolean endsNoSoonerThan(long atNanos) {
      Flight<K, V> f = flight;
      return f != null && f.endsNoSoonerThan(atNanos);
    }

    /**
     * A waiter leaves its flight (client gone, deadline): its callback will not run. Returns false
     * when the flight had already ended (the callback ran or is running) or this is not a waiter.
     */
    public boolean cancel() {
      Flight<K, V> f = flight;
      return role == Role.WAITER && f != null && f.remove(waiter);
    }
  }

  /** One origin fetch that waiters share. */
  public static final class Flight<K, V> {
    static final int ADDED = 0;
    static final int FULL = 1;
    static final int ENDED = 2;

    private final Collapser<K, V> owner;
    private final K key;
    private final List<Waiter<V>> waiters = new ArrayList<>(4);
    private boolean ended;

    /** Whether {@link #noValueBefore} holds a time, and that time. */
    private boolean delayed;

    private long noValueBefore;

    Flight(Collapser<K, V> owner, K key) {
      this.owner = owner;
      this.key = key;
    }

    synchronized int tryAdd(Waiter<V> w, int max) {
      if (ended) {
        return ENDED;
      }
      if (waiters.size() >= max) {
        return FULL;
      }
      waiters.add(w);
      return ADDED;
    }

    synchronized boolean remove(Waiter<V> w) {
      return !ended && waiters.remove(w);
    }

    /**
     * The leader's fetch cannot end before {@code atNanos}: every waiter now attached hears it
     * ({@link Waiter#onNoValueBefore}), and one joining later can ask ({@link
     * Ticket#endsNoSoonerThan}). Nothing happens once the flight has ended.
     */
    public void noValueBefore(long atNanos) {
      List<Waiter<V>> toTell;
      synchronized (this) {
        if (ended) {
          return;
        }
        delayed = true;
        noValueBefore = atNanos;
        toTell = new ArrayList<>(waiters);
      }
      tellAll(toTell, w -> w.onNoValueBefore(atNanos));
    }

    /**
     * Whether the leader said its fetch cannot end before {@code atNanos} or later ({@link
     * #noValueBefore(long)}), and the flight goes on.
     */
    synchronized boolean endsNoSoonerThan(long atNanos) {
      return delayed && !ended && noValueBefore - atNanos >= 0;
    }

    /** Waiters currently attached. */
    public synchronized int waiterCount() {
      return waiters.size();
    }

    /** Ends the flight with a response every waiter receives. False if it had already ended. */
    public boolean complete(V value) {
      return endWith(w -> w.onSuccess(value));
    }

    /** Ends the flight with a failure every waiter receives. False if it had already ended. */
    public boolean fail(Throwable cause) {
      return endWith(w -> w.onFailure(cause));
    }

    /** Ends the flight and tells every waiter that was attached. */
    private boolean endWith(Consumer<Waiter<V>> tell) {
      List<Waiter<V>> toCall = end();
      if (toCall == null) {
        return false;
      }
      tellAll(toCall, tell);
      return true;
    }

    /**
     * Tells every waiter of {@code toTell}; one that throws does not keep the others from hearing.
     */
    private void tellAll(List<Waiter<V>> toTell, Consumer<Waiter<V>> tell) {
      RuntimeException first = null;
      for (Waiter<V> w : toTell) {
        try {
          tell.accept(w);
        } catch (RuntimeException e) {
          first = record(first, e);
        }
      }
      rethrow(first);
    }

    private @Nullable List<Waiter<V>> end() {
      List<Waiter<V>> toCall;
      synchronized (this) {
        if (ended) {
          owner.misuse.increment();
          return null;
        }
        ended = true;
        toCall = new ArrayList<>(waiters);
        waiters.clear();
      }
      owner.flights.remove(key, this);
      return toCall;
    }

    /** One waiter throwing must not keep the others waiting forever: call all, then rethrow. */
    private static RuntimeException record(@Nullable RuntimeException first, RuntimeException e) {
      if (first == null) {
        return e;
      }
      first.addSuppressed(e);
      return first;
    }

    private static void rethrow(@Nullable RuntimeException e) {
      if (e != null) {
        throw e;
      }
    }
  }
}
