package dev.parapet.core.balance;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Consistent hashing on a ring of virtual nodes, ketama-style (Karger et al., "Consistent Hashing
 * and Random Trees", 1997; libketama; Envoy's {@code RING_HASH}). Each host owns a number of points
 * on a 64-bit ring proportional to its weight, at {@code hash(address, i)}; a key goes to the owner
 * of the first point at or after {@code hash(key)}, wrapping around. When one of N hosts leaves,
 * only the keys on its points move (about 1/N of them), each to the next point's owner.
 *
 * <p>A host's points depend only on its address and weight ({@code pointsPerWeight × weight}
 * points, ketama's 160 per unit by default), never on the other hosts, so adding or removing a host
 * leaves every other point where it was. Only when the ring would exceed {@value #MAX_RING_SIZE}
 * points are all counts scaled down, and then remapping is no longer minimal. (Envoy sizes the ring
 * from the total weight instead, which moves some points of every host on each change.)
 *
 * <p>The ring is built from addresses only, never from health: an ejected host's keys walk forward
 * to the next available point and come back when it returns, so ejection, like removal, moves only
 * that host's keys. A host in slow start accepts a key only if a per-(key, host) hash falls below
 * its slow-start factor, otherwise the key walks on; the share ramps up while the mapping stays a
 * pure function of the key.
 */
public final class RingHashBalancer implements LoadBalancer {
  /** Points per unit of weight: ketama's 160 per server. */
  public static final int DEFAULT_POINTS_PER_WEIGHT = 160;

  static final int MAX_RING_SIZE = 1 << 20;

  private final SlowStart slowStart;
  private final int pointsPerWeight;
  private volatile Ring ring;

  public RingHashBalancer(HostSet hosts, SlowStart slowStart) {
    this(hosts, slowStart, DEFAULT_POINTS_PER_WEIGHT);
  }

  /** A ring with {@code pointsPerWeight} points per unit of host weight, in {@code [1, 10000]}. */
  public RingHashBalancer(HostSet hosts, SlowStart slowStart, int pointsPerWeight) {
    if (pointsPerWeight < 1 || pointsPerWeight > 10_000) {
      throw new IllegalArgumentException(
          "pointsPerWeight : " + pointsPerWeight + " (expected: in [1, 10000])");
    }
    this.slowStart = slowStart;
    this.pointsPerWeight = pointsPerWeight;
    this.ring = Ring.build(hosts, pointsPerWeight);
  }

  /** A hash of {@code bytes} (for example the UTF-8 of a URL path) to pass as a pick key. */
  public static long hashKey(byte[] bytes) {
    return Hashing.hash64(bytes);
  }

  @Override
  public @Nullable Host pick(long nowNanos, long key) {
    return ring.lookup(Hashing.mix64(key), nowNanos, slowStart);
  }

  @Override
  public void update(HostSet hosts) {
    ring = Ring.build(hosts, pointsPerWeight);
  }

  @Override
  public HostSet hosts() {
    return ring.hosts;
  }

  /** Number of points on the current ring (for tests and the admin API). */
  int ringSize() {
    return ring.points.length;
  }

  private static final class Ring {
    final HostSet hosts;
    final long[] points;
    final int[] owners;
    final long[] salts;
    // Bucket index: bucket b's points start at starts[b]; about one point per bucket, so a lookup
    // is two array reads and a short scan instead of a 15-level binary search.
    final int[] starts;
    final int shift;

    private Ring(HostSet hosts, long[] points, int[] owners, long[] salts) {
      this.hosts = hosts;
      this.points = points;
      this.owners = owners;
      this.salts = salts;
      int bits = Math.max(1, 32 - Integer.numberOfLeadingZeros(Math.max(1, points.length - 1)));
      this.shift = 64 - bits;
      this.starts = new int[(1 << bits) + 1];
      int i = 0;
      for (int b = 0; b < starts.length; b++) {
        while (i < points.length && bucket(points[i]) < b) {
          i++;
        }
        starts[b] = i;
      }
    }

    /** Monotone in the signed order of the points: flip the sign bit, keep the top bits. */
    private int bucket(long hash) {
      return (int) ((hash ^ Long.MIN_VALUE) >>> shift);
    }

    static Ring build(HostSet hosts, int pointsPerWeight) {
      int n = hosts.size();
      long wanted = hosts.totalWeight() * pointsPerWeight;
      double scale = wanted > MAX_RING_SIZE ? (double) MAX_RING_SIZE / wanted : 1.0;
      long[] salts = new long[n];
      int[] counts = new int[n];
      int size = 0;
      for (int i = 0; i < n; i++) {
        Host h = hosts.get(i);
        salts[i] = Hashing.hash64(h.address().getBytes(StandardCharsets.UTF_8));
        counts[i] = (int) Math.max(1L, Math.round(scale * pointsPerWeight * h.weight()));
        size += counts[i];
      }
      long[] packedHash = new long[size];
      int[] packedOwner = new int[size];
      int p = 0;
      for (int i = 0; i < n; i++) {
        byte[] address = hosts.get(i).address().getBytes(StandardCharsets.UTF_8);
        for (int v = 0; v < counts[i]; v++) {
          packedHash[p] = Hashing.hash64(address, v);
          packedOwner[p] = i;
          p++;
        }
      }
      Integer[] order = new Integer[size];
      for (int k = 0; k < size; k++) {
        order[k] = k;
      }
      // Ties (vanishingly rare) are broken by address hash so the order never depends on list
      // order.
      Arrays.sort(
          order,
          (x, y) -> {
            int c = Long.compare(packedHash[x], packedHash[y]);
            return c != 0 ? c : Long.compare(salts[packedOwner[x]], salts[packedOwner[y]]);
          });
      long[] points = new long[size];
      int[] owners = new int[size];
      for (int k = 0; k < size; k++) {
        points[k] = packedHash[order[k]];
        owners[k] = packedOwner[order[k]];
      }
      return new Ring(hosts, points, owners, salts);
    }

    @Nullable Host lookup(long hash, long nowNanos, SlowStart slowStart) {
      int size = points.length;
      if (size == 0) {
        return null;
      }
      int b = bucket(hash);
      int start = starts[b];
      int end = starts[b + 1];
      while (start < end && points[start] < hash) {
        start++;
      }
      HostHealth health = hosts.health();
      int fallback = -1;
      for (int k = 0; k < size; k++) {
        int p = start + k < size ? start + k : start + k - size;
        int owner = owners[p];
        if (health.isEjected(owner)) {
          continue;
        }
        double factor = slowStart.factor(health, owner, nowNanos);
        if (factor >= 1.0 || Hashing.unit(Hashing.mix64(hash ^ salts[owner])) < factor) {
          return hosts.get(owner);
        }
        if (fallback < 0) {
          fallback = owner;
        }
      }
      // Every available host is in slow start and declined: the first available one takes the key.
      return fallback < 0 ? null : hosts.get(fallback);
    }
  }
}
