package dev.parapet.core.limit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A caller-owned, reusable slot holder: {@link ConcurrencyGate#tryAcquire} arms it, and exactly one
 * of {@link #onSuccess}, {@link #onIgnore} or {@link #onDropped} gives the slot back. Keeping the
 * permit with the caller (one per request context, reused for the next request) is what makes
 * acquire and release allocation-free.
 *
 * <p>Exactly once: completion is a compare-and-set from active to completing, so of two
 * completions, even racing ones from different threads, one wins and the other returns {@code
 * false} and is counted in {@link ConcurrencyGate#misuseCount()} (Netflix concurrency-limits'
 * {@code Listener} would decrement in-flight twice). Once the completing call returns the permit is
 * idle again and may be acquired anew.
 */
public final class Permit {
  private static final int IDLE = 0;
  private static final int ACTIVE = 1;
  private static final int COMPLETING = 2;
  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(Permit.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("UnusedVariable")
  private volatile int state;

  // Written before the release-store of ACTIVE, read after winning the CAS out of ACTIVE.
  private @Nullable ConcurrencyGate gate;
  private long startNanos;
  private int inflightAtStart;

  /** A new idle permit. */
  public Permit() {}

  /** Whether this permit holds a slot now. */
  public boolean isActive() {
    return (int) STATE.getVolatile(this) != IDLE;
  }

  /** When the current (or last) slot was acquired. */
  public long startNanos() {
    return startNanos;
  }

  /** The request succeeded: gives the slot back and feeds its RTT to the limit algorithm. */
  public boolean onSuccess(long nowNanos) {
    return complete(ConcurrencyGate.SUCCESS, nowNanos);
  }

  /**
   * The outcome says nothing about the origin (client gave up, hedge loser, local rejection): gives
   * the slot back without a sample.
   */
  public boolean onIgnore(long nowNanos) {
    return complete(ConcurrencyGate.IGNORE, nowNanos);
  }

  /** The request timed out or was refused by the origin: gives the slot back as a drop. */
  public boolean onDropped(long nowNanos) {
    return complete(ConcurrencyGate.DROPPED, nowNanos);
  }

  void checkIdle() {
    int s = (int) STATE.getVolatile(this);
    if (s != IDLE) {
      throw new IllegalStateException(
          "permit : " + (s == ACTIVE ? "active" : "completing") + " (expected: idle)");
    }
  }

  void arm(ConcurrencyGate gate, long nowNanos, int inflight) {
    this.gate = gate;
    this.startNanos = nowNanos;
    this.inflightAtStart = inflight;
    STATE.setRelease(this, ACTIVE);
  }

  private boolean complete(int kind, long nowNanos) {
    if (!STATE.compareAndSet(this, ACTIVE, COMPLETING)) {
      ConcurrencyGate last = gate;
      if (last != null) {
        last.countMisuse();
      }
      return false;
    }
    ConcurrencyGate owner = Objects.requireNonNull(gate);
    try {
      owner.release(startNanos, inflightAtStart, kind, nowNanos);
    } finally {
      STATE.setRelease(this, IDLE);
    }
    return true;
  }

  @Override
  public String toString() {
    int s = (int) STATE.getVolatile(this);
    return "Permit[" + (s == IDLE ? "idle" : s == ACTIVE ? "active" : "completing") + "]";
  }
}
