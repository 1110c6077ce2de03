package dev.parapet.proxy.flow;

import dev.parapet.core.breaker.BreakerPolicy;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * The incident runbook as state (DESIGN.md: {@code POST /admin/incident} tightens failure
 * thresholds to 20 % and prefers stale; {@code DELETE} restores). While active, every breaker
 * policy the listener builds has its failure rate lowered to {@link #FAILURE_RATE} (never raised: a
 * route that already trips at 10 % keeps 10 %), and {@link #preferStale()} tells the request path
 * to serve a stale cached copy, when it has one, rather than ask the origin.
 *
 * <p>Written by the admin API (under the server's lock), read by event loops: one volatile field.
 */
public final class IncidentMode {
  /** The failure-rate threshold every breaker gets during an incident. */
  public static final double FAILURE_RATE = 0.20;

  /** When the incident started, or null when none is active. */
  private volatile @Nullable Instant since;

  /** True while an incident is declared. */
  public boolean active() {
    return since != null;
  }

  /** True while an incident is declared: serve stale rather than go to the origin. */
  public boolean preferStale() {
    return since != null;
  }

  /** When the current incident started, or null. */
  public @Nullable Instant since() {
    return since;
  }

  public void set(@Nullable Instant startedAt) {
    this.since = startedAt;
  }

  /** {@code policy} as it applies now: tightened during an incident, unchanged otherwise. */
  public BreakerPolicy apply(BreakerPolicy policy) {
    return since == null ? policy : tighten(policy);
  }

  /** {@code policy} with a failure rate of at most {@link #FAILURE_RATE}. */
  public static BreakerPolicy tighten(BreakerPolicy policy) {
    if (policy.failureRate() <= FAILURE_RATE) {
      return policy;
    }
    return policy.toBuilder().failureRate(FAILURE_RATE).build();
  }

  /** What a change did, for the admin API and the log line. */
  public record Change(
      boolean active,
      boolean changed,
      @Nullable Instant since,
      int breakersRebuilt,
      int breakersKeptTripped) {}
}
