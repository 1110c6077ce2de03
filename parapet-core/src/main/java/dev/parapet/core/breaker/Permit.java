package dev.parapet.core.breaker;

import dev.parapet.core.outcome.Outcome;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One admitted call, completed exactly once.
 *
 * <p>A permit is owned by the caller and reused: the proxy keeps one per request (or per attempt),
 * so admitting a call allocates nothing. {@link CircuitBreaker#tryAcquire(Permit, long)} arms it
 * when the call is admitted; exactly one of {@link #onOutcome} or {@link #release} then completes
 * it. A second completion changes nothing and is counted as misuse on the breaker ({@link
 * CircuitBreaker#misuseCount()}), unlike a listener that would silently count twice. Re-arming a
 * permit that is still active is a programming error and throws.
 *
 * <p>Thread-safety: completion may happen on another thread than acquisition, and concurrent
 * completions race safely through one compare-and-set.
 */
public final class Permit {
  static final int IDLE = 0;
  static final int ACTIVE = 1;
  static final int DONE = 2;

  static final byte NORMAL = 0;
  static final byte PROBE = 1;
  static final byte SHADOW = 2;
  static final byte UNTRACKED = 3;

  private static final VarHandle STATUS;

  static {
    try {
      STATUS = MethodHandles.lookup().findVarHandle(Permit.class, "status", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // accessed through STATUS
  private volatile int status = IDLE;

  private @Nullable CircuitBreaker breaker;
  byte kind;
  long epoch;
  long startNanos;
  private long requestId;
  private Decision shadowed = Decision.PERMITTED;

  /** An idle permit, ready to be armed. */
  public Permit() {}

  /** Sets the id of the request this permit belongs to (shows up in transition events). */
  public Permit requestId(long id) {
    this.requestId = id;
    return this;
  }

  /** The id set by {@link #requestId(long)}, or 0. */
  public long requestId() {
    return requestId;
  }

  /** True between admission and completion. */
  public boolean isActive() {
    return (int) STATUS.getAcquire(this) == ACTIVE;
  }

  /** True when the current admission is a half-open probe. */
  public boolean isProbe() {
    return kind == PROBE;
  }

  /**
   * In shadow mode: the rejection enforcing would have made; otherwise {@link Decision#PERMITTED}.
   */
  public Decision shadowedDecision() {
    return kind == SHADOW ? shadowed : Decision.PERMITTED;
  }

  /** The ticker reading at admission. */
  public long startNanos() {
    return startNanos;
  }

  /**
   * Completes the call with its classified outcome at {@code nowNanos}. Latency, when it matters
   * (probes), is {@code nowNanos - startNanos()}.
   *
   * @return true if this completed the permit; false if it was already completed (counted misuse)
   */
  public boolean onOutcome(Outcome outcome, long nowNanos) {
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
  public boolean release(long nowNanos) {
    return onOutcome(Outcome.LOCAL_REJECTION, nowNanos);
  }

  void arm(CircuitBreaker b, byte kind, long epoch, long nowNanos) {
    if ((int) STATUS.getAcquire(this) == ACTIVE) {
      throw new IllegalStateException(
          "permit : active (expected: completed with onOutcome or release before reuse)");
    }
    this.breaker = b;
    this.kind = kind;
    this.epoch = epoch;
    this.startNanos = nowNanos;
    STATUS.setRelease(this, ACTIVE);
  }

  void armShadow(CircuitBreaker b, Decision wouldHaveBeen, long epoch, long nowNanos) {
    arm(b, SHADOW, epoch, nowNanos);
    this.shadowed = wouldHaveBeen;
  }

  private @Nullable CircuitBreaker complete() {
    if (STATUS.compareAndSet(this, ACTIVE, DONE)) {
      // The successful CAS orders this read after the arming thread's writes.
      return Objects.requireNonNull(breaker);
    }
    CircuitBreaker b = breaker;
    if (b == null) {
      throw new IllegalStateException("permit : never admitted (expected: armed by tryAcquire)");
    }
    b.countMisuse();
    return null;
  }
}
