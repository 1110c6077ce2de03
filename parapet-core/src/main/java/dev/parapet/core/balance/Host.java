package dev.parapet.core.balance;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One origin host as the balancers see it: an address, a static weight and the number of requests
 * in flight to it (used by {@link LeastRequestBalancer}).
 *
 * <p>A {@code Host} outlives host-list snapshots: when the pool's host list changes, hosts that
 * stay are carried into the new {@link HostSet} as the same objects, so their in-flight counts
 * survive.
 */
public final class Host {
  /** Largest accepted weight; keeps smooth-WRR schedules and hash tables small. */
  public static final int MAX_WEIGHT = 1000;

  private final String address;
  private final int weight;
  private final AtomicInteger active = new AtomicInteger();

  /** A host with weight 1. */
  public Host(String address) {
    this(address, 1);
  }

  /** A host with {@code weight} in {@code [1, MAX_WEIGHT]}. */
  public Host(String address, int weight) {
    if (address.isEmpty()) {
      throw new IllegalArgumentException("address : \"\" (expected: not empty)");
    }
    if (weight < 1 || weight > MAX_WEIGHT) {
      throw new IllegalArgumentException(
          "weight : " + weight + " (expected: in [1, " + MAX_WEIGHT + "])");
    }
    this.address = address;
    this.weight = weight;
  }

  public String address() {
    return address;
  }

  public int weight() {
    return weight;
  }

  /** Requests currently in flight to this host. */
  public int activeRequests() {
    return active.get();
  }

  /** Call when a request to this host starts; pair with exactly one {@link #requestFinished()}. */
  public void requestStarted() {
    active.incrementAndGet();
  }

  /** Call when a request to this host ends (any outcome). Never drops below zero. */
  public void requestFinished() {
    int current;
    do {
      current = active.get();
      if (current == 0) {
        return;
      }
    } while (!active.compareAndSet(current, current - 1));
  }

  @Override
  public String toString() {
    return address + "(w=" + weight + ")";
  }
}
