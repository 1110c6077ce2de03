package dev.parapet.core.balance;

import org.jspecify.annotations.Nullable;

/**
 * Client-address affinity, after nginx's {@code ip_hash}: the client's address bytes are hashed and
 * the hash selects a slot in a table where each host appears {@code weight} times (interleaved in
 * smooth-WRR order). When the chosen host is ejected, or declines the key during slow start, the
 * hash is remixed and another slot tried, up to {@value #REHASHES} times, then the table is scanned
 * for the next available host, so a client stays on its host as long as that host is available.
 *
 * <p>Unlike {@link RingHashBalancer} the mapping is modular: adding or removing a host remaps most
 * clients, which is nginx's behaviour. Use ring hash when the host list changes often. nginx hashes
 * only the first three octets of an IPv4 address; here all the address bytes count, so clients
 * behind one /24 are spread too.
 */
public final class IpHashBalancer implements LoadBalancer {
  static final int REHASHES = 20;
  private static final int MAX_TABLE = 1 << 16;

  private final SlowStart slowStart;
  private volatile Table table;

  public IpHashBalancer(HostSet hosts, SlowStart slowStart) {
    this.slowStart = slowStart;
    this.table = Table.build(hosts);
  }

  /** The pick key for a client address ({@code InetAddress.getAddress()}: 4 or 16 bytes). */
  public static long hashAddress(byte[] address) {
    return Hashing.hash64(address, 0x1b873593L);
  }

  /**
   * Picks a host for the client {@code address}; same as {@code pick(now, hashAddress(address))}.
   */
  public @Nullable Host pick(long nowNanos, byte[] address) {
    return pick(nowNanos, hashAddress(address));
  }

  /** Picks a host for a key made by {@link #hashAddress(byte[])}. */
  @Override
  public @Nullable Host pick(long nowNanos, long key) {
    Table t = table;
    int[] slots = t.slots;
    if (slots.length == 0) {
      return null;
    }
    HostHealth health = t.hosts.health();
    long h = key;
    for (int attempt = 0; attempt < REHASHES; attempt++) {
      int host = slots[Hashing.reduce(h, slots.length)];
      if (!health.isEjected(host)) {
        double factor = slowStart.factor(health, host, nowNanos);
        if (factor >= 1.0 || Hashing.unit(Hashing.mix64(key ^ host)) < factor) {
          return t.hosts.get(host);
        }
      }
      h = Hashing.mix64(h + attempt + 1);
    }
    int start = Hashing.reduce(key, slots.length);
    for (int k = 0; k < slots.length; k++) {
      int s = start + k < slots.length ? start + k : start + k - slots.length;
      if (!health.isEjected(slots[s])) {
        return t.hosts.get(slots[s]);
      }
    }
    return null;
  }

  @Override
  public void update(HostSet hosts) {
    table = Table.build(hosts);
  }

  @Override
  public HostSet hosts() {
    return table.hosts;
  }

  private static final class Table {
    final HostSet hosts;
    final int[] slots;

    private Table(HostSet hosts, int[] slots) {
      this.hosts = hosts;
      this.slots = slots;
    }

    static Table build(HostSet hosts) {
      int n = hosts.size();
      int[] weights = new int[n];
      long sum = 0;
      for (int i = 0; i < n; i++) {
        weights[i] = hosts.get(i).weight();
        sum += weights[i];
      }
      if (sum > MAX_TABLE) {
        // Keep the table bounded: scale weights down, never below 1.
        double scale = (double) MAX_TABLE / sum;
        sum = 0;
        for (int i = 0; i < n; i++) {
          weights[i] = (int) Math.max(1L, (long) (weights[i] * scale));
          sum += weights[i];
        }
      }
      int[] slots = sum == 0 ? new int[0] : RoundRobinBalancer.cycleOf(weights, (int) sum);
      return new Table(hosts, slots);
    }
  }
}
