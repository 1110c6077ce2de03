package dev.parapet.proxy.upstream;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One configured origin pool: its hosts' connection pools, a round-robin host choice (smarter
 * balancers arrive with outlier ejection), and the pool-wide bound on requests in flight ({@code
 * limits.max_requests}).
 */
public final class OriginPool {
  private final OriginSettings settings;
  private final List<HostPool> hosts;
  private final AtomicLong next = new AtomicLong();
  private final AtomicInteger inFlight = new AtomicInteger();

  public OriginPool(OriginSettings settings, Class<? extends Channel> channelType) {
    this.settings = settings;
    List<HostPool> hs = new ArrayList<>();
    int connectMillis =
        (int) Math.max(1, Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis()));
    for (InetSocketAddress a : settings.hosts()) {
      hs.add(
          new HostPool(
              settings.name() + "/" + a.getHostString() + ":" + a.getPort(),
              a,
              settings.maxConnections(),
              settings.maxPending(),
              connectMillis,
              channelType));
    }
    this.hosts = List.copyOf(hs);
  }

  public OriginSettings settings() {
    return settings;
  }

  public String name() {
    return settings.name();
  }

  public List<HostPool> hosts() {
    return hosts;
  }

  /** The next host, round robin. */
  public HostPool pick() {
    return hosts.get((int) Math.floorMod(next.getAndIncrement(), (long) hosts.size()));
  }

  /** Takes a request slot; false when {@code max_requests} are already in flight. */
  public boolean tryStartRequest() {
    for (; ; ) {
      int n = inFlight.get();
      if (n >= settings.maxRequests()) {
        return false;
      }
      if (inFlight.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /** Returns a slot taken by {@link #tryStartRequest}. */
  public void finishRequest() {
    inFlight.decrementAndGet();
  }

  /** Requests in flight to this pool. */
  public int inFlight() {
    return inFlight.get();
  }

  /** Closes idle connections (shutdown). */
  public void closeIdle() {
    hosts.forEach(HostPool::closeIdle);
  }
}
