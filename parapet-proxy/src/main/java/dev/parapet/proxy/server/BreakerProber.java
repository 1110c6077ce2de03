package dev.parapet.proxy.server;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Decision;
import dev.parapet.core.breaker.Permit;
import dev.parapet.core.breaker.ProbeMode;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.flow.ProxyContext;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.upstream.HostPool;
import dev.parapet.proxy.upstream.OriginPool;
import dev.parapet.proxy.upstream.ProbeRequest;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What breakers learn outside live traffic, on one event loop every 100 ms:
 *
 * <ul>
 *   <li><b>Synthetic probes</b> ({@code breaker.probe: {path: /healthz}}, seed 004: "send just one
 *       synthetic probe request, not live user traffic"). A breaker with {@link
 *       ProbeMode#SYNTHETIC} rejects live requests while half-open; when {@link
 *       CircuitBreaker#nanosUntilProbe} says a probe is due, this sends a {@link ProbeRequest} to a
 *       host the breaker protects and completes the probe permit with its outcome: a 2xx answer is
 *       a success (the breaker itself judges its latency against {@code half_open.max_latency}),
 *       any other status a failure, no answer within {@code max_latency} a timeout. One probe per
 *       breaker is in flight at a time; spacing and counts are the breaker's.
 *   <li><b>Active health checks</b>: when an origin's {@code health_check} holds out every host a
 *       breaker protects (the host of a {@code host} or {@code shard} breaker, every host of the
 *       pool otherwise), a CLOSED or RAMPING breaker opens at once ({@link
 *       CircuitBreaker#openOnHealthCheck}) instead of waiting for user requests to fail.
 * </ul>
 *
 * <p>A sweep reads the breaker registry (a few hundred breakers at most, each a volatile read), so
 * polling costs less than wiring a listener per breaker and survives reloads without bookkeeping.
 */
final class BreakerProber {
  private final Supplier<ProxyContext> context;
  private final Ticker ticker;
  private final EventLoop loop;
  private final Set<BreakerKey> inFlight = ConcurrentHashMap.newKeySet();
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong healthOpens = new AtomicLong();

  BreakerProber(Supplier<ProxyContext> context, Ticker ticker, EventLoop loop) {
    this.context = context;
    this.ticker = ticker;
    this.loop = loop;
  }

  /** Synthetic probes sent so far. */
  long probesSent() {
    return sent.get();
  }

  /** Breakers opened because health checks held their hosts out. */
  long healthCheckOpens() {
    return healthOpens.get();
  }

  /** One sweep over every breaker; runs on {@link #loop}. */
  void sweep() {
    ProxyContext ctx = context.get();
    boolean healthChecked = false;
    for (OriginPool p : ctx.origins().values()) {
      healthChecked |= p.isHealthChecked();
    }
    for (CircuitBreaker b : ctx.breakers().all()) {
      State state = b.state();
      boolean probing =
          b.policy().probeMode() == ProbeMode.SYNTHETIC
              && (state == State.OPEN || state == State.HALF_OPEN);
      boolean closed = state == State.CLOSED || state == State.RAMPING;
      if (!probing && !(healthChecked && closed)) {
        continue;
      }
      Target t = target(ctx, b.key());
      if (t == null) {
        continue;
      }
      long now = ticker.read();
      if (closed && t.allFailHealthChecks() && b.openOnHealthCheck(now)) {
        healthOpens.incrementAndGet();
      }
      if (probing && !inFlight.contains(b.key()) && b.nanosUntilProbe(now) == 0) {
        probe(b, t, now);
      }
    }
  }

  private void probe(CircuitBreaker b, Target t, long now) {
    String path = t.probePath();
    if (path == null) {
      return; // the configuration gives synthetic probes a path; a hand-built policy may not
    }
    Permit permit = new Permit();
    if (b.tryAcquireProbe(permit, now) != Decision.PROBE) {
      return;
    }
    inFlight.add(b.key());
    sent.incrementAndGet();
    HostPool host = t.hosts().get((int) (sent.get() % t.hosts().size()));
    long limitMillis = Math.max(1, b.policy().probeMaxLatency().toMillis());
    int timeoutMillis = (int) Math.min(Integer.MAX_VALUE, limitMillis);
    t.pool()
        .probe(
            host,
            path,
            timeoutMillis,
            loop,
            status -> {
              Outcome o =
                  switch (status) {
                    case ProbeRequest.TIMED_OUT -> Outcome.TIMEOUT;
                    case ProbeRequest.NO_ANSWER -> Outcome.CONNECT_FAILURE;
                    default -> status / 100 == 2 ? Outcome.SUCCESS : Outcome.FAILURE_STATUS;
                  };
              permit.onOutcome(o, ticker.read());
              inFlight.remove(b.key());
            });
  }

  /**
   * The pool and hosts a breaker protects, and the path its synthetic probes request.
   *
   * @param hosts the hosts probes go to, in turn, and whose health checks count
   */
  private record Target(OriginPool pool, List<HostPool> hosts, @Nullable String probePath) {
    boolean allFailHealthChecks() {
      for (HostPool h : hosts) {
        if (!pool.failsHealthChecks(h)) {
          return false;
        }
      }
      return true;
    }
  }

  /** Reads the breaker key the way {@link ProxyContext#breakerKey} writes it. */
  static @Nullable Target target(ProxyContext ctx, BreakerKey key) {
    String id = key.name();
    if (key.scope() == Scope.ORIGIN) {
      OriginPool p = ctx.origins().get(id);
      return p == null ? null : new Target(p, p.hosts(), p.settings().probePath());
    }
    if (key.scope() == Scope.ROUTE) {
      int arrow = id.lastIndexOf("->");
      String routeId = arrow < 0 ? id : id.substring(0, arrow);
      for (Route r : ctx.routes().routes()) {
        if (r.id().equals(routeId)) {
          OriginPool p = ctx.origins().get(arrow < 0 ? r.origin() : id.substring(arrow + 2));
          if (p == null) {
            return null;
          }
          String own = arrow < 0 ? r.probePath() : null;
          return new Target(p, p.hosts(), own != null ? own : p.settings().probePath());
        }
      }
      return null;
    }
    for (OriginPool p : ctx.origins().values()) {
      List<HostPool> hosts = new ArrayList<>(1);
      for (HostPool h : p.hosts()) {
        boolean mine =
            key.scope() == Scope.HOST
                ? h.id().equals(id)
                : (p.name() + "/" + (h.index() % p.shardCount())).equals(id);
        if (mine) {
          hosts.add(h);
        }
      }
      if (!hosts.isEmpty()) {
        return new Target(p, List.copyOf(hosts), p.settings().probePath());
      }
    }
    return null;
  }
}
