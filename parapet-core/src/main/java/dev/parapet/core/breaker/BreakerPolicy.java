package dev.parapet.core.breaker;

import dev.parapet.core.time.Durations;
import dev.parapet.core.window.CountWindow;
import dev.parapet.core.window.OutcomeWindow;
import dev.parapet.core.window.TimeWindow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything a {@link CircuitBreaker} decides by. Immutable; the defaults are DESIGN.md's, which
 * come from the seeds:
 *
 * <ul>
 *   <li>window: 10 s in 100 buckets (or the last N calls); opens at {@code >= 200} calls and a
 *       weighted failure rate {@code >= 50 %} (slow calls weigh 0.5), or a slow-call rate {@code >=
 *       35 %}, or 3 connect failures within 10 s (no volume minimum);
 *   <li>open: 30 s, doubling on each consecutive re-open up to 5 min, jittered by ±20 %;
 *   <li>half-open: 3 probes at least 500 ms apart, one in flight, 2 succeeding under 1 s close;
 *   <li>ramp: 5 % of traffic growing to 100 % over 30 s;
 *   <li>flapping: more than 15 opens within an hour.
 * </ul>
 *
 * Build with {@link #builder()}; {@link Builder#build()} reports every invalid field at once, each
 * as "field : value (expected: ...)".
 */
public final class BreakerPolicy {

  /** The kind of window. */
  public enum WindowKind {
    TIME,
    COUNT
  }

  private static final BreakerPolicy DEFAULTS = builder().build();

  final WindowKind windowKind;
  final Duration window;
  final int buckets;
  final int windowSize;
  final int minRequests;
  final double failureRate;
  final double slowRate;
  final double slowWeight;
  final int connectFailures;
  final Duration connectFailuresWithin;
  final long openBaseNanos;
  final long openMaxNanos;
  final double openJitter;
  final int probes;
  final long probeSpacingNanos;
  final int probesRequired;
  final long probeMaxLatencyNanos;
  final long probeTimeoutNanos;
  final ProbeMode probeMode;
  final double rampFrom;
  final long rampOverNanos;
  final int flappingOpens;
  final Duration flappingWithin;
  final Mode mode;

  private BreakerPolicy(Builder b) {
    this.windowKind = b.windowKind;
    this.window = b.window;
    this.buckets = b.buckets;
    this.windowSize = b.windowSize;
    this.minRequests = b.minRequests;
    this.failureRate = b.failureRate;
    this.slowRate = b.slowRate;
    this.slowWeight = b.slowWeight;
    this.connectFailures = b.connectFailures;
    this.connectFailuresWithin = b.connectFailuresWithin;
    this.openBaseNanos = Durations.saturatedNanos(b.openBase);
    this.openMaxNanos = Durations.saturatedNanos(b.openMax);
    this.openJitter = b.openJitter;
    this.probes = b.probes;
    this.probeSpacingNanos = Durations.saturatedNanos(b.probeSpacing);
    this.probesRequired = b.probesRequired;
    this.probeMaxLatencyNanos = Durations.saturatedNanos(b.probeMaxLatency);
    this.probeTimeoutNanos = Durations.saturatedNanos(b.probeTimeout);
    this.probeMode = b.probeMode;
    this.rampFrom = b.rampFrom;
    this.rampOverNanos = Durations.saturatedNanos(b.rampOver);
    this.flappingOpens = b.flappingOpens;
    this.flappingWithin = b.flappingWithin;
    this.mode = b.mode;
  }

  /** DESIGN.md's defaults. */
  public static BreakerPolicy defaults() {
    return DEFAULTS;
  }

  /** A builder starting from the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from this policy. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.windowKind = windowKind;
    b.window = window;
    b.buckets = buckets;
    b.windowSize = windowSize;
    b.minRequests = minRequests;
    b.failureRate = failureRate;
    b.slowRate = slowRate;
    b.slowWeight = slowWeight;
    b.connectFailures = connectFailures;
    b.connectFailuresWithin = connectFailuresWithin;
    b.openBase = Duration.ofNanos(openBaseNanos);
    b.openMax = Duration.ofNanos(openMaxNanos);
    b.openJitter = openJitter;
    b.probes = probes;
    b.probeSpacing = Duration.ofNanos(probeSpacingNanos);
    b.probesRequired = probesRequired;
    b.probeMaxLatency = Duration.ofNanos(probeMaxLatencyNanos);
    b.probeTimeout = Duration.ofNanos(probeTimeoutNanos);
    b.probeMode = probeMode;
    b.rampFrom = rampFrom;
    b.rampOver = Duration.ofNanos(rampOverNanos);
    b.flappingOpens = flappingOpens;
    b.flappingWithin = flappingWithin;
    b.mode = mode;
    return b;
  }

  /** A new, empty window of this policy's kind, starting at {@code nowNanos}. */
  public OutcomeWindow newWindow(long nowNanos) {
    return windowKind == WindowKind.TIME
        ? new TimeWindow(window, buckets, nowNanos)
        : new CountWindow(windowSize);
  }

  public WindowKind windowKind() {
    return windowKind;
  }

  public Duration window() {
    return window;
  }

  public int buckets() {
    return buckets;
  }

  public int windowSize() {
    return windowSize;
  }

  public int minRequests() {
    return minRequests;
  }

  public double failureRate() {
    return failureRate;
  }

  public double slowRate() {
    return slowRate;
  }

  public double slowWeight() {
    return slowWeight;
  }

  public int connectFailures() {
    return connectFailures;
  }

  public Duration connectFailuresWithin() {
    return connectFailuresWithin;
  }

  public Duration openBase() {
    return Duration.ofNanos(openBaseNanos);
  }

  public Duration openMax() {
    return Duration.ofNanos(openMaxNanos);
  }

  public double openJitter() {
    return openJitter;
  }

  public int probes() {
    return probes;
  }

  public Duration probeSpacing() {
    return Duration.ofNanos(probeSpacingNanos);
  }

  public int probesRequired() {
    return probesRequired;
  }

  public Duration probeMaxLatency() {
    return Duration.ofNanos(probeMaxLatencyNanos);
  }

  public Duration probeTimeout() {
    return Duration.ofNanos(probeTimeoutNanos);
  }

  public ProbeMode probeMode() {
    return probeMode;
  }

  public double rampFrom() {
    return rampFrom;
  }

  public Duration rampOver() {
    return Duration.ofNanos(rampOverNanos);
  }

  public int flappingOpens() {
    return flappingOpens;
  }

  public Duration flappingWithin() {
    return flappingWithin;
  }

  public Mode mode() {
    return mode;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BreakerPolicy p && toString().equals(p.toString());
  }

  @Override
  public int hashCode() {
    return toString().hashCode();
  }

  @Override
  public String toString() {
    return "BreakerPolicy{window="
        + (windowKind == WindowKind.TIME ? window + "/" + buckets : "last " + windowSize)
        + ", minRequests="
        + minRequests
        + ", failureRate="
        + failureRate
        + ", slowRate="
        + slowRate
        + ", slowWeight="
        + slowWeight
        + ", connectFailures="
        + connectFailures
        + "/"
        + connectFailuresWithin
        + ", open="
        + openBase()
        + ".."
        + openMax()
        + "±"
        + openJitter
        + ", probes="
        + probesRequired
        + "/"
        + probes
        + " every "
        + probeSpacing()
        + " under "
        + probeMaxLatency()
        + " timeout "
        + probeTimeout()
        + " "
        + probeMode
        + ", ramp="
        + rampFrom
        + " over "
        + rampOver()
        + ", flapping="
        + flappingOpens
        + "/"
        + flappingWithin
        + ", mode="
        + mode
        + "}";
  }

  /** Mutable builder; {@link #build()} validates every field at once. */
  public static final class Builder {
    private WindowKind windowKind = WindowKind.TIME;
    private Duration window = Duration.ofSeconds(10);
    private int buckets = 100;
    private int windowSize = 100;
    private int minRequests = 200;
    private double failureRate = 0.50;
    private double slowRate = 0.35;
    private double slowWeight = 0.5;
    private int connectFailures = 3;
    private Duration connectFailuresWithin = Duration.ofSeconds(10);
    private Duration openBase = Duration.ofSeconds(30);
    private Duration openMax = Duration.ofMinutes(5);
    private double openJitter = 0.20;
    private int probes = 3;
    private Duration probeSpacing = Duration.ofMillis(500);
    private int probesRequired = 2;
    private Duration probeMaxLatency = Duration.ofSeconds(1);
    private Duration probeTimeout = Duration.ofSeconds(30);
    private ProbeMode probeMode = ProbeMode.LIVE;
    private double rampFrom = 0.05;
    private Duration rampOver = Duration.ofSeconds(30);
    private int flappingOpens = 15;
    private Duration flappingWithin = Duration.ofHours(1);
    private Mode mode = Mode.ENFORCE;

    private Builder() {}

    /** A time-bucketed window of {@code length} in {@code buckets} buckets. */
    public Builder timeWindow(Duration length, int buckets) {
      this.windowKind = WindowKind.TIME;
      this.window = length;
      this.buckets = buckets;
      return this;
    }

    /** A count-based window over the last {@code calls} calls. */
    public Builder countWindow(int calls) {
      this.windowKind = WindowKind.COUNT;
      this.windowSize = calls;
      return this;
    }

    /** Calls needed in the window before rates are evaluated. */
    public Builder minRequests(int v) {
      this.minRequests = v;
      return this;
    }

    /** Weighted failure rate (0..1] that opens the breaker. */
    public Builder failureRate(double v) {
      this.failureRate = v;
      return this;
    }

    /** Slow-call rate (0..1] that opens the breaker. */
    public Builder slowRate(double v) {
      this.slowRate = v;
      return this;
    }

    /** How much a slow call weighs in the failure rate, [0..1]. */
    public Builder slowWeight(double v) {
      this.slowWeight = v;
      return this;
    }

    /** Fast trip: {@code count} connect failures within {@code within}; count 0 disables it. */
    public Builder connectFailures(int count, Duration within) {
      this.connectFailures = count;
      this.connectFailuresWithin = within;
      return this;
    }

    /** Open time: {@code base} doubling per consecutive re-open up to {@code max}, ±jitter. */
    public Builder open(Duration base, Duration max, double jitter) {
      this.openBase = base;
      this.openMax = max;
      this.openJitter = jitter;
      return this;
    }

    /**
     * Half-open: {@code probes} probes {@code spacing} apart; {@code required} under maxLatency.
     */
    public Builder halfOpen(int probes, Duration spacing, int required, Duration maxLatency) {
      this.probes = probes;
      this.probeSpacing = spacing;
      this.probesRequired = required;
      this.probeMaxLatency = maxLatency;
      return this;
    }

    /** A probe not completed within this counts as a failed probe (guards lost permits). */
    public Builder probeTimeout(Duration v) {
      this.probeTimeout = v;
      return this;
    }

    /** Live or synthetic probes. */
    public Builder probeMode(ProbeMode v) {
      this.probeMode = v;
      return this;
    }

    /** Ramp from {@code from} (0..1] of traffic to all of it over {@code over}; 0 s skips it. */
    public Builder ramp(double from, Duration over) {
      this.rampFrom = from;
      this.rampOver = over;
      return this;
    }

    /** Flapping: more than {@code opens} opens within {@code within}. */
    public Builder flapping(int opens, Duration within) {
      this.flappingOpens = opens;
      this.flappingWithin = within;
      return this;
    }

    /** Enforce or shadow. */
    public Builder mode(Mode v) {
      this.mode = v;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming every invalid field, separated by "; "
     */
    public BreakerPolicy build() {
      List<String> errors = new ArrayList<>();
      if (windowKind == WindowKind.TIME) {
        positive(errors, "window", window);
        if (buckets < 1 || buckets > 10_000) {
          errors.add("buckets : " + buckets + " (expected: in [1, 10000])");
        } else if (!window.isNegative()
            && !window.isZero()
            && Durations.saturatedNanos(window) / buckets < 1_000_000L) {
          errors.add("buckets : " + buckets + " (expected: at most one bucket per ms of window)");
        }
      } else if (windowSize < 1 || windowSize > 1_000_000) {
        errors.add("window_size : " + windowSize + " (expected: in [1, 1000000])");
      }
      if (minRequests < 1) {
        errors.add("min_requests : " + minRequests + " (expected: >= 1)");
      }
      rate(errors, "failure_rate", failureRate);
      rate(errors, "slow.rate", slowRate);
      if (!(slowWeight >= 0.0 && slowWeight <= 1.0)) {
        errors.add("slow.weight : " + slowWeight + " (expected: in [0, 1])");
      }
      if (connectFailures < 0 || connectFailures > 10_000) {
        errors.add("connect_failures.count : " + connectFailures + " (expected: in [0, 10000])");
      }
      positive(errors, "connect_failures.within", connectFailuresWithin);
      positive(errors, "open.base", openBase);
      positive(errors, "open.max", openMax);
      if (!openBase.isNegative() && openMax.compareTo(openBase) < 0) {
        errors.add("open.max : " + openMax + " (expected: >= open.base " + openBase + ")");
      }
      if (!(openJitter >= 0.0 && openJitter < 1.0)) {
        errors.add("open.jitter : " + openJitter + " (expected: in [0, 1))");
      }
      if (probes < 1 || probes > 1000) {
        errors.add("half_open.probes : " + probes + " (expected: in [1, 1000])");
      }
      if (probesRequired < 1 || probesRequired > probes) {
        errors.add(
            "half_open.required : " + probesRequired + " (expected: in [1, " + probes + "])");
      }
      if (probeSpacing.isNegative()) {
        errors.add("half_open.spacing : " + probeSpacing + " (expected: >= 0)");
      }
      positive(errors, "half_open.max_latency", probeMaxLatency);
      positive(errors, "half_open.probe_timeout", probeTimeout);
      if (!(rampFrom > 0.0 && rampFrom <= 1.0)) {
        errors.add("ramp.from : " + rampFrom + " (expected: in (0, 1])");
      }
      if (rampOver.isNegative()) {
        errors.add("ramp.over : " + rampOver + " (expected: >= 0)");
      }
      if (flappingOpens < 1 || flappingOpens > 9_999) {
        errors.add("flapping.opens : " + flappingOpens + " (expected: in [1, 9999])");
      }
      positive(errors, "flapping.within", flappingWithin);
      if (!errors.isEmpty()) {
        throw new IllegalArgumentException(String.join("; ", errors));
      }
      return new BreakerPolicy(this);
    }

    private static void positive(List<String> errors, String name, Duration d) {
      if (d.isNegative() || d.isZero()) {
        errors.add(name + " : " + d + " (expected: > 0)");
      }
    }

    private static void rate(List<String> errors, String name, double v) {
      if (!(v > 0.0 && v <= 1.0)) {
        errors.add(name + " : " + v + " (expected: in (0, 1])");
      }
    }
  }
}
