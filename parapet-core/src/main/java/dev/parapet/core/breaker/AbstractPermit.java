package dev.parapet.core.breaker;

import dev.parapet.core.outcome.Outcome;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a breaker keeps about one admitted call, held in the caller's own object: which breaker
 * admitted it, as what (normal call, probe, shadow, untracked), in which epoch and when, and
 * whether it is still to be completed.
 *
 * <p>{@link Permit} is the ready-made one. An object that already lives exactly as long as the call
 * can extend this class and be its own permit, so that admitting the call adds no object and
 * completing it touches no other object. The core's {@code exchange.Attempt} is one: a simulation
 * makes hundreds of millions of attempts, and every object per attempt shows in its time. The
 * subclass decides who may complete it: the completion methods are protected here and public on
 * {@link Permit}.
 *
 * <p>The rules are {@link Permit}'s: {@link CircuitBreaker#tryAcquire(AbstractPermit, long)} arms
 * it when the call is admitted; exactly one completion follows; a second one changes nothing and is
 * counted as misuse on the breaker; re-arming while active throws. Completion may happen on another
 * thread than acquisition, and concurrent completions race safely through one compare-and-set.
 */
public abstract class AbstractPermit {
  static final byte IDLE = 0;
  static final byte ACTIVE = 1;
  static final byte DONE = 2;

  static final byte NORMAL = 0;
  static final byte PROBE = 1;
  static final byte SHADOW = 2;
  static final byte UNTRACKED = 3;

  private static final Decision[] DECISIONS = Decision.values();
  private static final VarHandle STATUS;

  static {
    try {
      STATUS = MethodHandles.lookup().findVarHandle(AbstractPermit.class, "status", byte.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // Bytes (the shadowed decision's ordinal, not a reference) keep the permit's share of an object
  // that extends it small. The status starts IDLE (0) without an initializer: an explicit one
  // would be a volatile write, a full fence, in every constructor.
  @SuppressWarnings("unused") // accessed through STATUS
  private volatile byte status;

  byte kind;
  private byte shadowed;
  private @Nullable CircuitBreaker breaker;
  long epoch;
  long startNanos;
  long requestId;

  /** An idle permit, ready to be armed. */
  protected AbstractPermit() {}

  /**
   * A permit for calls to {@code breaker}: {@link #breaker()} answers it before the first
   * admission. The breaker that arms the permit replaces it.
   */
  protected AbstractPermit(@Nullable CircuitBreaker breaker) {
    this.breaker = breaker;
  }

  /**
   * The breaker that last armed this permit, or the one it was made for; null when there is none.
   */
  public final @Nullable CircuitBreaker breaker() {
    return breaker;
  }

  /** The id of the request this call belongs to (shows up in transition events), or 0. */
  public final long requestId() {
    return requestId;
  }

  /** Sets the id that {@link #requestId()} answers; takes effect from the next admission on. */
  protected final void requestIdForEvents(long id) {
    this.requestId = id;
  }

  /** True between admission and completion. */
  public final boolean isActive() {
    return (byte) STATUS.getAcquire(this) == ACTIVE;
  }

  /** True when the last admission was a half-open probe. */
  public final boolean isProbe() {
    return kind == PROBE;
  }

  /**
   * In shadow mode: the rejection enforcing would have made; otherwise {@link Decision#PERMITTED}.
   */
  public final Decision shadowedDecision() {
    return kind == SHADOW ? DECISIONS[shadowed] : Decision.PERMITTED;
  }

  /** The ticker reading at admission. */
  public final long startNanos() {
    return startNanos;
  }

  /**
   * Completes the call with its classified outcome at {@code nowNanos}. Latency, when it matters
   * (probes), is {@code nowNanos - startNanos()}.
   *
   * @return true if this completed the permit; false if it was already completed (counted misuse)
   */
  protected boolean onOutcome(Outcome outcome, long nowNanos) {
    CircuitBreaker b = complete();
    if (b == null) {
      return false;
    }
    b.complete(this, outcome, nowNanos);
    return true;
  }

  /**
   * Completes the call without evidence: it never reached the origin (shed after admission, client
   * gone before sending). A probe permit is given back so another probe can go.
   *
   * @return true if this completed the permit; false if it was already completed (counted misuse)
   */
  protected boolean release(long nowNanos) {
    return onOutcome(Outcome.LOCAL_REJECTION, nowNanos);
  }

  final void arm(CircuitBreaker b, byte kind, long epoch, long nowNanos) {
    arm(b, kind, Decision.PERMITTED, epoch, nowNanos);
  }

  final void armShadow(CircuitBreaker b, Decision wouldHaveBeen, long epoch, long nowNanos) {
    arm(b, SHADOW, wouldHaveBeen, epoch, nowNanos);
  }

  private void arm(CircuitBreaker b, byte kind, Decision shadowed, long epoch, long nowNanos) {
    if ((byte) STATUS.getAcquire(this) == ACTIVE) {
      throw new IllegalStateException(
          "permit : active (expected: completed with onOutcome or release before reuse)");
    }
    this.breaker = b;
    this.kind = kind;
    this.shadowed = (byte) shadowed.ordinal();
    this.epoch = epoch;
    this.startNanos = nowNanos;
    STATUS.setRelease(this, ACTIVE);
  }

  private @Nullable CircuitBreaker complete() {
    if (STATUS.compareAndSet(this, ACTIVE, DONE)) {
      // The successful CAS orders this read after the arming thread's writes.
      return Objects.requireNonNull(breaker);
    }
    if ((byte) STATUS.getAcquire(this) == IDLE) {
      throw new IllegalStateException("permit : never admitted (expected: armed by tryAcquire)");
    }
    Objects.requireNonNull(breaker).countMisuse();
    return null;
  }
}
