package dev.parapet.sim;

import dev.parapet.core.exchange.ExchangeFailure;
import dev.parapet.core.hedge.HedgeDecision;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.retry.RetryRefusal;

/**
 * What the core's request sequence decided over one run, counted from its hooks: the simulator's
 * {@code parapet_retries_total{result}}, {@code parapet_hedges_total{result}} and local answers by
 * reason. Every count here is a decision the core made; the simulator only tallies them.
 */
@SuppressWarnings("EnumOrdinal") // ordinals index dense count arrays
final class Decisions {
  private static final RetryRefusal[] REFUSALS = RetryRefusal.values();

  private long retriesSent;
  private final long[] retriesRefused = new long[RetryRefusal.values().length];
  private final long[] hedges = new long[HedgeDecision.values().length];
  private final long[] failures = new long[ExchangeFailure.values().length];
  private long probesShed;

  void retry(long decision) {
    if (RetryPolicy.isRetry(decision)) {
      retriesSent++;
    } else {
      for (RetryRefusal r : REFUSALS) { // not RetryRefusal.of: it copies values() per call
        if (r.code() == decision) {
          retriesRefused[r.ordinal()]++;
          return;
        }
      }
      throw new IllegalArgumentException(
          "retry decision : " + decision + " (expected: a delay or a refusal code)");
    }
  }

  void hedge(HedgeDecision d) {
    hedges[d.ordinal()]++;
  }

  void failure(ExchangeFailure f) {
    failures[f.ordinal()]++;
  }

  void probeShed() {
    probesShed++;
  }

  /** Retries the core decided to make (a retry may still be dropped when its backoff ends). */
  long retriesDecided() {
    return retriesSent;
  }

  /** Retries the core refused for {@code r}. */
  long retriesRefused(RetryRefusal r) {
    return retriesRefused[r.ordinal()];
  }

  /** Hedge decisions of kind {@code d} ({@link HedgeDecision#HEDGE}: hedges sent). */
  long hedges(HedgeDecision d) {
    return hedges[d.ordinal()];
  }

  /** Requests that failed for {@code f}. */
  long failures(ExchangeFailure f) {
    return failures[f.ordinal()];
  }

  /**
   * Requests whose first attempt the breaker admitted as a half-open probe and admission control
   * then shed: the core gave the probe permit back unused.
   */
  long probesShed() {
    return probesShed;
  }
}
