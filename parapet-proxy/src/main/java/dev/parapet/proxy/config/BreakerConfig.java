package dev.parapet.proxy.config;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.ProbeMode;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.outcome.SlowCallThreshold;
import dev.parapet.core.outcome.StatusSet;
import java.time.Duration;
import java.util.function.LongUnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * An origin's circuit breaker ({@code origins.NAME.breaker:}), or a route's effective breaker (the
 * origin's with the route's {@code breaker:} fields merged over it). {@link #toBreakerPolicy()}
 * turns it into the core's {@link BreakerPolicy}.
 *
 * @param scope what one breaker protects; {@code route}
 * @param mode {@code enforce} or {@code shadow} (decide and report, reject nothing)
 * @param windowKind a time window ({@code window: 10s}) or a count window ({@code window_size: N})
 * @param window length of the time window; 10 s
 * @param buckets buckets of the time window; 100
 * @param windowSize calls in a count window ({@code window_size}); 100
 * @param minRequests calls in the window before rates count; 200
 * @param failureRate weighted failure rate that opens; 50 %
 * @param failureStatuses {@code failure_statuses}: response statuses that count as failures; 500,
 *     502, 503, 504 and 429
 * @param probePath {@code probe: {path: /healthz}}: synthetic half-open probes of this path; null:
 *     real requests are the probes
 */
public record BreakerConfig(
    Scope scope,
    Mode mode,
    BreakerPolicy.WindowKind windowKind,
    Duration window,
    int buckets,
    int windowSize,
    int minRequests,
    double failureRate,
    StatusSet failureStatuses,
    Slow slow,
    ConnectFailures connectFailures,
    Open open,
    HalfOpen halfOpen,
    Ramp ramp,
    Flapping flapping,
    @Nullable String probePath) {

  public static final BreakerConfig DEFAULTS =
      new BreakerConfig(
          Scope.ROUTE,
          Mode.ENFORCE,
          BreakerPolicy.WindowKind.TIME,
          Duration.ofSeconds(10),
          100,
          100,
          200,
          0.50,
          StatusSet.DEFAULT_FAILURES,
          Slow.DEFAULTS,
          ConnectFailures.DEFAULTS,
          Open.DEFAULTS,
          HalfOpen.DEFAULTS,
          Ramp.DEFAULTS,
          Flapping.DEFAULTS,
          null);

  /**
   * {@code slow:} when a good response counts against the origin.
   *
   * @param threshold slower than this is slow; 500 ms
   * @param weight a slow call's weight in the failure rate; 0.5
   * @param rate slow-call rate that opens; 35 %
   */
  public record Slow(SlowThreshold threshold, double weight, double rate) {
    public static final Slow DEFAULTS =
        new Slow(new SlowThreshold.Absolute(Duration.ofMillis(500)), 0.5, 0.35);
  }

  /**
   * {@code slow.threshold}: {@code 500ms}, or relative to the origin's rolling latency such as
   * {@code 3x p95} (never below {@code slow.floor}).
   */
  public sealed interface SlowThreshold {
    /** Default floor of a relative threshold: 100 ms. */
    Duration DEFAULT_FLOOR = Duration.ofMillis(100);

    record Absolute(Duration threshold) implements SlowThreshold {}

    /**
     * Slow above {@code multiplier} times the origin's rolling {@code quantile} latency.
     *
     * @param multiplier {@code 3} in {@code 3x p95}
     * @param quantile {@code 0.95} in {@code 3x p95}
     * @param floor {@code slow.floor}
     */
    record Relative(double multiplier, double quantile, Duration floor) implements SlowThreshold {}

    /**
     * The core's threshold; {@code percentileNanos} gives the origin's {@code quantile} latency at
     * a time, negative while unknown (unused for an absolute threshold).
     */
    default SlowCallThreshold toSlowCallThreshold(LongUnaryOperator percentileNanos) {
      return switch (this) {
        case Absolute a -> SlowCallThreshold.absolute(a.threshold());
        case Relative r -> SlowCallThreshold.relative(r.multiplier(), percentileNanos, r.floor());
      };
    }
  }

  /**
   * {@code connect_failures:} the fast trip, with no minimum volume.
   *
   * @param count connect failures that open; 3 ({@code 0}: off)
   * @param within ... within this long; 10 s
   */
  public record ConnectFailures(int count, Duration within) {
    public static final ConnectFailures DEFAULTS = new ConnectFailures(3, Duration.ofSeconds(10));
  }

  /**
   * {@code open:} how long an open breaker fails fast.
   *
   * @param base first open time, doubling per consecutive re-open; 30 s
   * @param max cap; 5 min
   * @param jitter ± share; 20 %
   */
  public record Open(Duration base, Duration max, double jitter) {
    public static final Open DEFAULTS =
        new Open(Duration.ofSeconds(30), Duration.ofMinutes(5), 0.20);
  }

  /**
   * {@code half_open:} the probes.
   *
   * @param probes probes per episode; 3
   * @param spacing at least this apart; 500 ms
   * @param required probes succeeding under {@code maxLatency} that close; 2
   * @param maxLatency a slower probe failed; 1 s
   * @param probeTimeout {@code probe_timeout}: a probe not completed by then failed; 30 s
   */
  public record HalfOpen(
      int probes, Duration spacing, int required, Duration maxLatency, Duration probeTimeout) {
    public static final HalfOpen DEFAULTS =
        new HalfOpen(3, Duration.ofMillis(500), 2, Duration.ofSeconds(1), Duration.ofSeconds(30));
  }

  /**
   * {@code ramp:} after the probes, traffic grows back gradually.
   *
   * @param from starting share; 5 %
   * @param over to 100 % over this; 30 s ({@code 0s}: close at once)
   */
  public record Ramp(double from, Duration over) {
    public static final Ramp DEFAULTS = new Ramp(0.05, Duration.ofSeconds(30));
  }

  /**
   * {@code flapping:} more than {@code opens} opens within {@code within} is reported as flapping.
   *
   * @param opens 15
   * @param within 1 h
   */
  public record Flapping(int opens, Duration within) {
    public static final Flapping DEFAULTS = new Flapping(15, Duration.ofHours(1));
  }

  /**
   * The core's policy for this configuration. The loader has already validated every field the same
   * way, so for a loaded configuration this does not throw.
   *
   * @throws IllegalArgumentException naming every invalid field (for hand-built configs)
   */
  public BreakerPolicy toBreakerPolicy() {
    BreakerPolicy.Builder b = BreakerPolicy.builder();
    if (windowKind == BreakerPolicy.WindowKind.TIME) {
      b.timeWindow(window, buckets);
    } else {
      b.countWindow(windowSize);
    }
    return b.minRequests(minRequests)
        .failureRate(failureRate)
        .slowRate(slow.rate())
        .slowWeight(slow.weight())
        .connectFailures(connectFailures.count(), connectFailures.within())
        .open(open.base(), open.max(), open.jitter())
        .halfOpen(halfOpen.probes(), halfOpen.spacing(), halfOpen.required(), halfOpen.maxLatency())
        .probeTimeout(halfOpen.probeTimeout())
        .probeMode(probePath == null ? ProbeMode.LIVE : ProbeMode.SYNTHETIC)
        .ramp(ramp.from(), ramp.over())
        .flapping(flapping.opens(), flapping.within())
        .mode(mode)
        .build();
  }
}
