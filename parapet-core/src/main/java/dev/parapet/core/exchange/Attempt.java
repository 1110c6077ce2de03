package dev.parapet.core.exchange;

import dev.parapet.core.breaker.AbstractPermit;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.retry.BudgetSlot;
import org.jspecify.annotations.Nullable;

/**
 * One try of a request at the origin, as {@link AttemptSequence} sees it: the breaker that let it
 * go, its place in the extra-load budget when it is a retry or a hedge, its timeout, its classified
 * outcome, and where it is in its life.
 *
 * <p>An attempt is its own breaker permit ({@link AbstractPermit}): it lives exactly as long as the
 * call the breaker admitted, so admitting it adds no object and its completion touches no other.
 * Only the sequence completes it, once, when the attempt ends.
 *
 * <p>Where the attempt runs extends this class: the proxy's upstream attempt adds the origin pool,
 * the host and the pooled connection; the simulator's adds the drawn answer. The sequence alone
 * moves an attempt between states, through {@link #moveTo}, which refuses a transition that {@link
 * State} does not list (Resilience4j's {@code StateTransition}, Envoy's upstream stream states).
 */
public class Attempt extends AbstractPermit {
  /** Why the attempt exists. */
  public enum Kind {
    /** The request's first attempt (or its first attempt on the fallback pool). */
    FIRST,
    /** Another attempt after a failed one, within the retry budget. */
    RETRY,
    /** A second attempt racing a slow first one (after the origin's p95). */
    HEDGE
  }

  /**
   * Where an attempt is in its life. Legal moves: PENDING → CONNECTING → SENT → WON → ENDED,
   * PENDING → SENT (a driver without connections), and any state but ENDED → ENDED.
   */
  public enum State {
    /** The breaker admitted it; it waits for admission control (first attempts) or its start. */
    PENDING,
    /** Started: the driver is getting a connection for it. Nothing reached the origin yet. */
    CONNECTING,
    /** The request went to the origin; its response is awaited. */
    SENT,
    /** Its response head was chosen for the client; the body is being delivered. */
    WON,
    /** Over: its permit completed and its budget place given back, exactly once. */
    ENDED;

    boolean mayMoveTo(State next) {
      return switch (this) {
        case PENDING -> next == CONNECTING || next == SENT || next == ENDED;
        case CONNECTING -> next == SENT || next == ENDED;
        case SENT -> next == WON || next == ENDED;
        case WON -> next == ENDED;
        case ENDED -> false;
      };
    }
  }

  private final Kind kind;
  private final AttemptPolicy policy;
  private State state = State.PENDING;
  @Nullable BudgetSlot slot;
  private long timeoutNanos;
  private long sentNanos;
  private Outcome outcome = Outcome.SUCCESS;

  /**
   * An attempt to be offered to {@code breaker}.
   *
   * @param breaker the breaker of the attempt's scope, or null when no breaker guards it
   * @param policy the origin's attempt policy (classification, retries, hedging)
   */
  protected Attempt(Kind kind, @Nullable CircuitBreaker breaker, AttemptPolicy policy) {
    super(breaker);
    this.kind = kind;
    this.policy = policy;
  }

  public final Kind kind() {
    return kind;
  }

  public final State state() {
    return state;
  }

  /** The policy of the origin the attempt goes to. */
  public final AttemptPolicy policy() {
    return policy;
  }

  /**
   * The attempt's timeout: min(origin timeout, what the request's deadline leaves), once started.
   */
  public final long timeoutNanos() {
    return timeoutNanos;
  }

  /** When the request went to the origin (ticker nanos); meaningful from {@link State#SENT} on. */
  public final long sentNanos() {
    return sentNanos;
  }

  /** The classified response ({@link Outcome#SUCCESS} until a response head arrives). */
  public final Outcome outcome() {
    return outcome;
  }

  /** Started and not over: connecting, sent or delivering its response. */
  public final boolean isLive() {
    return state == State.CONNECTING || state == State.SENT || state == State.WON;
  }

  /** Whether the request reached the origin (then its end is evidence about the origin). */
  public final boolean reachedOrigin() {
    return state == State.SENT || state == State.WON;
  }

  final void requestId(long id) {
    requestIdForEvents(id);
  }

  /** Completes the breaker's permit: with evidence, or unused when {@code evidence} is null. */
  final void completePermit(@Nullable Outcome evidence, long now) {
    if (evidence == null) {
      release(now);
    } else {
      onOutcome(evidence, now);
    }
  }

  final void timeoutNanos(long nanos) {
    this.timeoutNanos = nanos;
  }

  final void sentNanos(long nanos) {
    this.sentNanos = nanos;
  }

  final void outcome(Outcome outcome) {
    this.outcome = outcome;
  }

  final void moveTo(State next) {
    if (!state.mayMoveTo(next)) {
      throw new IllegalStateException(
          "attempt state : " + state + " -> " + next + " (expected: a legal transition)");
    }
    state = next;
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + kind + ", " + state + (isProbe() ? ", probe]" : "]");
  }
}
