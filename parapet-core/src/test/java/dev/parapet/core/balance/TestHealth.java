package dev.parapet.core.balance;

import java.util.ArrayList;
import java.util.List;

/** A {@link HostHealth} a test sets by hand. */
final class TestHealth implements HostHealth {
  final boolean[] ejected;
  final boolean[] returned;
  final long[] returnedAt;
  long generation;

  TestHealth(int hosts) {
    ejected = new boolean[hosts];
    returned = new boolean[hosts];
    returnedAt = new long[hosts];
  }

  void eject(int host) {
    ejected[host] = true;
    generation++;
  }

  void returnAt(int host, long nowNanos) {
    ejected[host] = false;
    returned[host] = true;
    returnedAt[host] = nowNanos;
    generation++;
  }

  @Override
  public boolean isEjected(int host) {
    return ejected[host];
  }

  @Override
  public boolean hasReturned(int host) {
    return returned[host];
  }

  @Override
  public long returnedAtNanos(int host) {
    return returnedAt[host];
  }

  @Override
  public long generation() {
    return generation;
  }

  static List<Host> equalHosts(int n) {
    int[] weights = new int[n];
    java.util.Arrays.fill(weights, 1);
    return hosts(weights);
  }

  static List<Host> hosts(int... weights) {
    List<Host> list = new ArrayList<>();
    for (int i = 0; i < weights.length; i++) {
      list.add(new Host("10.0.0." + (i + 1) + ":80", weights[i]));
    }
    return list;
  }
}
