package dev.parapet.core.outcome;

/**
 * Turns what happened on one origin attempt into an {@link Outcome}: the small composable model
 * DESIGN.md describes. Errors map to their outcome directly; for responses a configured {@link
 * StatusSet} decides failure first, then a {@link SlowCallThreshold} decides slow, else success.
 *
 * <p>Classification allocates nothing; a classifier is immutable and safe to share. Compose by
 * replacing one part: {@link #withFailureStatuses}, {@link #withSlowCalls}.
 */
public final class OutcomeClassifier {
  private static final OutcomeClassifier DEFAULT =
      new OutcomeClassifier(StatusSet.DEFAULT_FAILURES, SlowCallThreshold.never());

  private final StatusSet failureStatuses;
  private final SlowCallThreshold slow;

  private OutcomeClassifier(StatusSet failureStatuses, SlowCallThreshold slow) {
    this.failureStatuses = failureStatuses;
    this.slow = slow;
  }

  /** 500/502/503/504/429 are failures; nothing is slow. */
  public static OutcomeClassifier standard() {
    return DEFAULT;
  }

  /** The same classifier with another set of failure statuses. */
  public OutcomeClassifier withFailureStatuses(StatusSet statuses) {
    return new OutcomeClassifier(statuses, slow);
  }

  /** The same classifier with another slow-call threshold. */
  public OutcomeClassifier withSlowCalls(SlowCallThreshold threshold) {
    return new OutcomeClassifier(failureStatuses, threshold);
  }

  /**
   * Classifies a response with {@code status} that took {@code latencyNanos}, at {@code nowNanos}.
   */
  public Outcome classifyResponse(int status, long latencyNanos, long nowNanos) {
    if (failureStatuses.contains(status)) {
      return Outcome.FAILURE_STATUS;
    }
    if (latencyNanos > slow.thresholdNanos(nowNanos)) {
      return Outcome.SLOW;
    }
    return Outcome.SUCCESS;
  }

  /** The failure statuses in use. */
  public StatusSet failureStatuses() {
    return failureStatuses;
  }
}
