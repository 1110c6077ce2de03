package dev.parapet.sim;

import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.exchange.Attempt;
import dev.parapet.core.exchange.AttemptPolicy;
import dev.parapet.core.outcome.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * One try of a simulated request at the origin under test: the core's {@link Attempt} (breaker
 * permit, budget place, state, classified outcome) plus the origin's answer, drawn when the attempt
 * starts ({@link Origin#draw}): a status, or a failure without a response. Its end event (a {@link
 * Wakeup}) hands the answer to its {@link SimRequest}, which reports it to the core's sequence.
 */
final class SimAttempt extends Attempt {
  /** The response status, when the origin answers. */
  int status;

  /** What the attempt ends with when the origin does not answer (timeout, refused), else null. */
  @Nullable Outcome failure;

  SimAttempt(Kind kind, @Nullable CircuitBreaker breaker, AttemptPolicy policy) {
    super(kind, breaker, policy);
  }
}
