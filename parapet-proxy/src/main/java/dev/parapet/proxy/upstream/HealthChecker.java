package dev.parapet.proxy.upstream;

import dev.parapet.core.balance.HostHealth;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jspecify.annotations.Nullable;

/**
 * Active health checks of one origin pool's hosts, as a {@link HostHealth} the pool's balancer
 * combines with its outlier detector (DESIGN.md: {@code health_check: {path: /healthz, interval:
 * 5s, timeout: 1s, healthy: 2, unhealthy: 3}}).
 *
 * <p>How it works. Each host has its own check loop on one of the proxy's event loops: a {@link
 * ProbeRequest} ({@code GET path} on a fresh connection, never a pooled one), answered by a 2xx
 * response head within {@code timeout} to pass. The next check follows after {@code interval ×
 * U[0.9, 1.1)}, and the first after {@code interval × U[0, 1)}, so hosts and proxies do not check
 * in lockstep (Envoy's {@code interval_jitter_percent}). {@code unhealthy} failures in a row take a
 * host out; {@code healthy} passes in a row bring it back, which counts as a return: balancers
 * slow-start it. Hosts start healthy, so a proxy serves at once after start or reload.
 *
 * <p>Checks keep running for hosts that are out — they are the only traffic such hosts get. State
 * changes happen on the host's own loop (one writer per host); reads are lock-free.
 */
final class HealthChecker implements HostHealth {
  private static final int HEALTHY = 0;
  private static final int UNHEALTHY = 1;
  private static final int RETURNED = 2;

  private final String origin;
  private final List<HostPool> hosts;
  private final HostSelection.HealthCheck check;
  private final Class<? extends Channel> channelType;
  private final Ticker ticker;
  private final RandomSource random;
  private final AtomicIntegerArray state;
  private final AtomicLongArray returnedAt;
  private final AtomicLong generation = new AtomicLong();
  // Per host, touched only on that host's loop.
  private final int[] passes;
  private final int[] failures;
  private final AtomicLong checks = new AtomicLong();
  private final @Nullable ScheduledFuture<?>[] next;
  private volatile boolean stopped;

  HealthChecker(
      String origin,
      List<HostPool> hosts,
      HostSelection.HealthCheck check,
      Class<? extends Channel> channelType,
      Ticker ticker,
      RandomSource random) {
    this.origin = origin;
    this.hosts = hosts;
    this.check = check;
    this.channelType = channelType;
    this.ticker = ticker;
    this.random = random;
    this.state = new AtomicIntegerArray(hosts.size());
    this.returnedAt = new AtomicLongArray(hosts.size());
    this.passes = new int[hosts.size()];
    this.failures = new int[hosts.size()];
    this.next = new ScheduledFuture<?>[hosts.size()];
  }

  /** Starts one check loop per host, each on a loop of {@code group}. */
  void start(EventLoopGroup group) {
    long interval = check.interval().toNanos();
    for (int i = 0; i < hosts.size(); i++) {
      EventLoop loop = group.next();
      int host = i;
      long first = (long) (interval * random.nextDouble());
      loop.execute(() -> schedule(loop, host, first));
    }
  }

  /** Stops scheduling checks; a check in progress finishes and is not followed by another. */
  void stop() {
    stopped = true;
    for (int i = 0; i < next.length; i++) {
      ScheduledFuture<?> f = next[i];
      if (f != null) {
        f.cancel(false);
      }
    }
  }

  /** Checks sent so far (all hosts). */
  long checksSent() {
    return checks.get();
  }

  /** Whether the host passes its health checks (or has not failed enough of them yet). */
  boolean isHealthy(int host) {
    return state.get(host) != UNHEALTHY;
  }

  private void schedule(EventLoop loop, int host, long delayNanos) {
    if (stopped) {
      return;
    }
    try {
      next[host] = loop.schedule(() -> run(loop, host), delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The loops are shutting down (the proxy is closing): no more checks.
    }
  }

  private void run(EventLoop loop, int host) {
    if (stopped) {
      return;
    }
    checks.incrementAndGet();
    int timeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, check.timeout().toMillis()));
    ProbeRequest.send(
        loop,
        channelType,
        hosts.get(host).address(),
        hosts.get(host).tls(),
        check.path(),
        timeoutMillis,
        "parapet-health-check",
        status -> {
          record(host, status / 100 == 2);
          long interval = check.interval().toNanos();
          schedule(loop, host, (long) (interval * (0.9 + 0.2 * random.nextDouble())));
        });
  }

  /** On the host's loop: counts the result and changes the host's state at a threshold. */
  private void record(int host, boolean passed) {
    if (passed) {
      failures[host] = 0;
      passes[host]++;
      if (state.get(host) == UNHEALTHY && passes[host] >= check.healthy()) {
        returnedAt.set(host, ticker.read());
        state.set(host, RETURNED);
        generation.incrementAndGet();
        log(host, "healthy");
      }
    } else {
      passes[host] = 0;
      failures[host]++;
      if (state.get(host) != UNHEALTHY && failures[host] >= check.unhealthy()) {
        state.set(host, UNHEALTHY);
        generation.incrementAndGet();
        log(host, "unhealthy");
      }
    }
  }

  private void log(int host, String to) {
    org.slf4j.LoggerFactory.getLogger("parapet.health")
        .info(
            "origin {} host {} is {} (health check {})",
            origin,
            hosts.get(host).id(),
            to,
            check.path());
  }

  @Override
  public boolean isEjected(int host) {
    return state.get(host) == UNHEALTHY;
  }

  @Override
  public boolean hasReturned(int host) {
    return state.get(host) == RETURNED;
  }

  @Override
  public long returnedAtNanos(int host) {
    return returnedAt.get(host);
  }

  @Override
  public long generation() {
    return generation.get();
  }
}
