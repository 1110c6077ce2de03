package dev.parapet.core.exchange;

import dev.parapet.core.hedge.HedgePolicy;
import dev.parapet.core.latency.RollingLatencyHistogram;
import dev.parapet.core.outcome.OutcomeClassifier;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.retry.RetryOn;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.retry.UpstreamCapacity;
import dev.parapet.core.time.Durations;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How attempts at one origin are made and judged: the per-attempt timeout, the classifier that
 * turns a response into evidence, the rolling latency that hedging reads, and the extra-load
 * policies — retries and hedges over one shared {@link ExtraLoadBudget} (seed 001: "hedged requests
 * with a strict retry budget"). Built once per origin and shared by every request to it: the
 * budgets and the latency histogram are thread-safe.
 */
public final class AttemptPolicy {
  private final long attemptTimeoutNanos;
  private final OutcomeClassifier classifier;
  private final @Nullable RollingLatencyHistogram latency;
  private final RetryPolicy retry;
  private final RetryOn retryOn;
  private final @Nullable HedgePolicy hedge;
  private final long fixedHedgeDelayNanos;
  private final @Nullable UpstreamCapacity capacity;

  private AttemptPolicy(AttemptPolicy p, OutcomeClassifier classifier) {
    this.attemptTimeoutNanos = p.attemptTimeoutNanos;
    this.classifier = Objects.requireNonNull(classifier, "classifier");
    this.latency = p.latency;
    this.retry = p.retry;
    this.retryOn = p.retryOn;
    this.hedge = p.hedge;
    this.fixedHedgeDelayNanos = p.fixedHedgeDelayNanos;
    this.capacity = p.capacity;
  }

  private AttemptPolicy(Builder b) {
    this.attemptTimeoutNanos = b.attemptTimeoutNanos;
    this.classifier = b.classifier;
    this.latency = b.latency;
    this.retry = Objects.requireNonNull(b.retry, "retry");
    this.retryOn = b.retryOn;
    this.hedge = b.hedge;
    this.fixedHedgeDelayNanos = b.fixedHedgeDelayNanos;
    this.capacity = b.capacity;
    if (hedge != null && latency == null) {
      throw new IllegalArgumentException(
          "latency : none (expected: the histogram the hedge policy reads, for it to be fed)");
    }
    if (hedge != null && hedge.extraLoad() != retry.budget()) {
      throw new IllegalArgumentException(
          "hedge extra-load budget : another one (expected: the retry policy's budget)");
    }
  }

  /**
   * A policy with the given timeout and retry policy, the standard classifier and no hedging.
   *
   * @param attemptTimeout an attempt's timeout before the deadline shortens it, > 0
   * @param retry the retry policy (its budget is the origin's extra-load budget)
   */
  public static Builder builder(Duration attemptTimeout, RetryPolicy retry) {
    return new Builder(Durations.positiveNanos("attemptTimeout", attemptTimeout), retry);
  }

  /**
   * This policy judging outcomes with {@code classifier}: the same retry policy, hedge policy and
   * extra-load budget (so a route with its own failure statuses or slow threshold still shares its
   * origin's retry and hedge ceilings).
   */
  public AttemptPolicy withClassifier(OutcomeClassifier classifier) {
    return new AttemptPolicy(this, classifier);
  }

  /** An attempt's timeout before the request's deadline shortens it. */
  public long attemptTimeoutNanos() {
    return attemptTimeoutNanos;
  }

  /** Turns a response status and latency into evidence. */
  public OutcomeClassifier classifier() {
    return classifier;
  }

  /**
   * The origin's rolling response latency, recorded per response head (hedging reads its p95, a
   * relative slow-call threshold its quantile), or null when nothing reads it.
   */
  public @Nullable RollingLatencyHistogram latency() {
    return latency;
  }

  public RetryPolicy retry() {
    return retry;
  }

  /** Which failures are worth a retry. */
  public RetryOn retryOn() {
    return retryOn;
  }

  /** The hedge policy, or null when this origin does not hedge. */
  public @Nullable HedgePolicy hedge() {
    return hedge;
  }

  /** Retries and hedges in flight together stay within this budget. */
  public ExtraLoadBudget extraLoad() {
    return retry.budget();
  }

  /**
   * What the origin said about its capacity, which bounds retries and hedges while it says it is
   * degraded; null when its signals are not listened to.
   */
  public @Nullable UpstreamCapacity capacity() {
    return capacity;
  }

  /** When to hedge a request starting now, or {@link HedgePolicy#NO_HEDGE}. */
  public long hedgeDelayNanos(long nowNanos) {
    HedgePolicy h = hedge;
    if (h == null) {
      return HedgePolicy.NO_HEDGE;
    }
    return fixedHedgeDelayNanos >= 0 ? fixedHedgeDelayNanos : h.delayNanos(nowNanos);
  }

  /** Builds an {@link AttemptPolicy}. */
  public static final class Builder {
    private final long attemptTimeoutNanos;
    private final RetryPolicy retry;
    private OutcomeClassifier classifier = OutcomeClassifier.standard();
    private @Nullable RollingLatencyHistogram latency;
    private RetryOn retryOn = RetryOn.DEFAULTS;
    private @Nullable HedgePolicy hedge;
    private long fixedHedgeDelayNanos = -1;
    private @Nullable UpstreamCapacity capacity;

    private Builder(long attemptTimeoutNanos, RetryPolicy retry) {
      this.attemptTimeoutNanos = attemptTimeoutNanos;
      this.retry = retry;
    }

    public Builder classifier(OutcomeClassifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /**
     * Where response latencies are recorded; none by default. A hedge policy (and a relative
     * slow-call threshold) must read the same histogram.
     */
    public Builder latency(RollingLatencyHistogram latency) {
      this.latency = Objects.requireNonNull(latency, "latency");
      return this;
    }

    public Builder retryOn(RetryOn retryOn) {
      this.retryOn = Objects.requireNonNull(retryOn, "retryOn");
      return this;
    }

    /**
     * Hedge after the policy's rolling quantile; its extra-load budget must be the retries' one.
     */
    public Builder hedge(HedgePolicy hedge) {
      this.hedge = Objects.requireNonNull(hedge, "hedge");
      this.fixedHedgeDelayNanos = -1;
      return this;
    }

    /**
     * Hedge after a fixed delay instead of the rolling quantile (the policy's caps still apply).
     */
    public Builder hedge(HedgePolicy hedge, Duration fixedDelay) {
      this.hedge = Objects.requireNonNull(hedge, "hedge");
      this.fixedHedgeDelayNanos = Durations.nonNegativeNanos("fixedDelay", fixedDelay);
      return this;
    }

    /** Listens to the origin's capacity signals (none by default). */
    public Builder capacity(UpstreamCapacity capacity) {
      this.capacity = Objects.requireNonNull(capacity, "capacity");
      return this;
    }

    public AttemptPolicy build() {
      return new AttemptPolicy(this);
    }
  }
}
