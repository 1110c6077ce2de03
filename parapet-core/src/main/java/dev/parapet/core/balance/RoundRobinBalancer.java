package dev.parapet.core.balance;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Smooth weighted round robin, nginx's algorithm ({@code ngx_http_upstream_get_peer}, 2012): every
 * pick adds each available host's effective weight to its running {@code current} value, picks the
 * host with the largest {@code current}, and subtracts the total weight from the winner. Over one
 * cycle of {@code sum(weights)} picks every host is chosen exactly {@code weight} times, and the
 * picks are interleaved (weights 5,1,1 give a a b a c a a, not a a a a a b c).
 *
 * <p>Because that loop touches every host (O(n) under a lock), the common case is served from a
 * precomputed schedule instead: whenever the health {@link HostHealth#generation() generation}
 * changes, one full cycle of the algorithm is run over the available hosts (weights divided by
 * their gcd) and stored; a pick is then one atomic increment and an array read.
 *
 * <p>While a host is in slow start its weight changes with time. The schedule then uses weights in
 * steps of 1/{@value #SLOW_START_STEPS} of a host's weight (each host's slow-start factor rounded
 * to the nearest step) and is rebuilt every 1/{@value #SLOW_START_STEPS} of the slow-start window,
 * so the ramp is followed to within a step. The locked O(n) loop, with exact slow-start weights,
 * runs only when a cycle would exceed {@value #MAX_SCHEDULE} entries, and for the one pick that
 * finds a host ejected after the schedule was built.
 */
public final class RoundRobinBalancer implements LoadBalancer {
  static final int MAX_SCHEDULE = 1 << 14;
  static final int SLOW_START_STEPS = 20;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(RoundRobinBalancer.class, "state", State.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final SlowStart slowStart;

  // Swapped by update() and by rebuilds; a rebuild CASes so it never undoes a concurrent update.
  private volatile State state;

  public RoundRobinBalancer(HostSet hosts, SlowStart slowStart) {
    this.slowStart = slowStart;
    this.state = State.unbuilt(hosts);
  }

  @Override
  public @Nullable Host pick(long nowNanos, long key) {
    State s = state;
    if (!s.built
        || s.generation != s.hosts.health().generation()
        || (s.slowStarting && nowNanos - s.rebuildAtNanos >= 0)) {
      s = rebuild(s, nowNanos); // may return a newer snapshot installed by update()
    }
    HostHealth health = s.hosts.health();
    int[] schedule = s.schedule;
    if (schedule != null) {
      int index = schedule[Math.floorMod(s.cursor.getAndIncrement(), schedule.length)];
      if (!health.isEjected(index)) {
        return s.hosts.get(index);
      }
      // Health changed after the schedule was built; the next pick rebuilds it.
    }
    return s.smoothPick(nowNanos, slowStart);
  }

  @Override
  public void update(HostSet hosts) {
    state = State.unbuilt(hosts);
  }

  @Override
  public HostSet hosts() {
    return state.hosts;
  }

  /** One full cycle of nginx's smooth weighted round robin over fixed integer weights. */
  static int[] cycleOf(int[] weights, int length) {
    int[] out = new int[length];
    long[] current = new long[weights.length];
    for (int pick = 0; pick < length; pick++) {
      int best = -1;
      for (int i = 0; i < weights.length; i++) {
        if (weights[i] == 0) {
          continue;
        }
        current[i] += weights[i];
        if (best < 0 || current[i] > current[best]) {
          best = i;
        }
      }
      current[best] -= length;
      out[pick] = best;
    }
    return out;
  }

  private State rebuild(State seen, long nowNanos) {
    State fresh = State.build(seen.hosts, slowStart, nowNanos);
    State witness = (State) STATE.compareAndExchange(this, seen, fresh);
    return witness == seen ? fresh : witness;
  }

  private static final class State {
    final HostSet hosts;
    final boolean built;
    final long generation;
    final int @Nullable [] schedule;
    final AtomicLong cursor = new AtomicLong();
    final boolean slowStarting;
    final long rebuildAtNanos;
    // Slow-path state of nginx's algorithm, guarded by this.
    private final long[] current;

    private State(
        HostSet hosts,
        boolean built,
        long generation,
        int @Nullable [] schedule,
        boolean slowStarting,
        long rebuildAtNanos) {
      this.hosts = hosts;
      this.built = built;
      this.generation = generation;
      this.schedule = schedule;
      this.slowStarting = slowStarting;
      this.rebuildAtNanos = rebuildAtNanos;
      this.current = new long[hosts.size()];
    }

    static State unbuilt(HostSet hosts) {
      return new State(hosts, false, 0L, null, false, 0L);
    }

    static State build(HostSet hosts, SlowStart slowStart, long nowNanos) {
      HostHealth health = hosts.health();
      long generation = health.generation();
      int n = hosts.size();
      int[] weights = new int[n];
      boolean slowStarting = false;
      for (int i = 0; i < n; i++) {
        if (!health.isEjected(i) && slowStart.factor(health, i, nowNanos) < 1.0) {
          slowStarting = true;
          break;
        }
      }
      int gcd = 0;
      long sum = 0;
      for (int i = 0; i < n; i++) {
        if (health.isEjected(i)) {
          continue;
        }
        weights[i] = hosts.get(i).weight();
        if (slowStarting) {
          long steps = Math.round(slowStart.factor(health, i, nowNanos) * SLOW_START_STEPS);
          weights[i] *= (int) Math.max(1L, steps);
        }
        gcd = gcd(gcd, weights[i]);
      }
      long rebuildAt = nowNanos + Math.max(1L, slowStart.windowNanos() / SLOW_START_STEPS);
      if (gcd > 0) {
        for (int i = 0; i < n; i++) {
          weights[i] /= gcd;
          sum += weights[i];
        }
      }
      int[] schedule = sum == 0 || sum > MAX_SCHEDULE ? null : cycleOf(weights, (int) sum);
      return new State(hosts, true, generation, schedule, slowStarting, rebuildAt);
    }

    /** nginx's loop over weights scaled by slow start; O(n) under this state's lock. */
    synchronized @Nullable Host smoothPick(long nowNanos, SlowStart slowStart) {
      HostHealth health = hosts.health();
      int best = -1;
      long total = 0;
      for (int i = 0; i < current.length; i++) {
        if (health.isEjected(i)) {
          continue;
        }
        long w =
            Math.max(
                1L,
                Math.round(hosts.get(i).weight() * 1024 * slowStart.factor(health, i, nowNanos)));
        current[i] += w;
        total += w;
        if (best < 0 || current[i] > current[best]) {
          best = i;
        }
      }
      if (best < 0) {
        return null;
      }
      current[best] -= total;
      return hosts.get(best);
    }

    private static int gcd(int a, int b) {
      while (b != 0) {
        int t = a % b;
        a = b;
        b = t;
      }
      return a;
    }
  }
}
