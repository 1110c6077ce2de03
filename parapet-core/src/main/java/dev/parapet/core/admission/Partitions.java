package dev.parapet.core.admission;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Guaranteed shares of the concurrency limit, one per partition (the proxy's routes), with the
 * requests each holds now.
 *
 * <p>How it works (Netflix concurrency-limits' {@code AbstractPartitionedLimiter}): a partition
 * whose requests in flight are below {@code ceil(share × limit)} is admitted at once, even when the
 * limit is reached; a partition at or above its share may still borrow whatever is idle, but when
 * the limit is reached it waits in the queue (and is shed from there) like any request. So a
 * partition that borrowed every slot while its siblings were quiet is the one cut back when they
 * return, and a slow sibling can never starve a healthy one of its share. The price is that the
 * requests in flight may exceed the limit by the unused guarantees (at most the limit again, with
 * shares summing to 1) while the borrower's requests drain.
 *
 * <p>Immutable except for the counters; a new configuration installs a new instance, and a request
 * gives its slot back to the instance it took it from.
 */
public final class Partitions {
  private final double[] shares;
  private final AtomicIntegerArray inflight;

  /**
   * @param shares each partition's share of the limit, each in [0, 1], summing to at most 1
   */
  public Partitions(double[] shares) {
    double sum = 0;
    for (double s : shares) {
      if (!(s >= 0 && s <= 1)) {
        throw new IllegalArgumentException(
            "share : " + s + " (expected: in [0, 1]) in " + Arrays.toString(shares));
      }
      sum += s;
    }
    if (sum > 1.000_001) {
      throw new IllegalArgumentException(
          "shares : " + Arrays.toString(shares) + " (expected: a sum <= 1)");
    }
    this.shares = shares.clone();
    this.inflight = new AtomicIntegerArray(shares.length);
  }

  /**
   * Partitions with the given shares, where a NaN share is "the default": an equal split of what
   * the explicit shares leave (with no explicit share at all, 1/n each).
   */
  public static Partitions withDefaults(double[] shares) {
    double explicit = 0;
    int unset = 0;
    for (double s : shares) {
      if (Double.isNaN(s)) {
        unset++;
      } else {
        explicit += s;
      }
    }
    double each = unset == 0 ? 0 : Math.max(0, 1 - explicit) / unset;
    double[] out = new double[shares.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = Double.isNaN(shares[i]) ? each : shares[i];
    }
    return new Partitions(out);
  }

  /** Partitions that split the limit equally, {@code n} of them. */
  public static Partitions equal(int n) {
    double[] s = new double[n];
    Arrays.fill(s, 1.0 / n);
    return new Partitions(s);
  }

  public int size() {
    return shares.length;
  }

  /** The share of partition {@code p}. */
  public double share(int p) {
    return shares[p];
  }

  /** Requests partition {@code p} holds a slot for now. */
  public int inflight(int p) {
    return inflight.get(p);
  }

  /** Whether partition {@code p} holds fewer slots than its share of {@code limit} guarantees. */
  boolean underShare(int p, int limit) {
    return inflight.get(p) < (int) Math.ceil(shares[p] * limit);
  }

  void took(int p) {
    inflight.incrementAndGet(p);
  }

  void gaveBack(int p) {
    inflight.decrementAndGet(p);
  }
}
