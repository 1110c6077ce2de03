package dev.parapet.core.balance;

import java.util.Arrays;
import java.util.List;

/**
 * An immutable snapshot of a pool's hosts together with the {@link HostHealth} indexed by the same
 * positions. Balancers swap whole snapshots atomically when the host list changes, so a {@code
 * pick} never sees half of an update.
 */
public final class HostSet {
  private final Host[] hosts;
  private final HostHealth health;

  private HostSet(Host[] hosts, HostHealth health) {
    this.hosts = hosts;
    this.health = health;
  }

  /** A snapshot of {@code hosts} (copied) whose health is answered by {@code health}. */
  public static HostSet of(List<Host> hosts, HostHealth health) {
    return new HostSet(hosts.toArray(new Host[0]), health);
  }

  /** A snapshot of {@code hosts} that are always healthy. */
  public static HostSet of(List<Host> hosts) {
    return of(hosts, HostHealth.ALL_HEALTHY);
  }

  public int size() {
    return hosts.length;
  }

  public Host get(int index) {
    return hosts[index];
  }

  public HostHealth health() {
    return health;
  }

  /** The hosts as an unmodifiable list (a copy; not for hot paths). */
  public List<Host> hosts() {
    return List.of(hosts);
  }

  /** Sum of the static weights. */
  long totalWeight() {
    long sum = 0;
    for (Host h : hosts) {
      sum += h.weight();
    }
    return sum;
  }

  @Override
  public String toString() {
    return Arrays.toString(hosts);
  }
}
