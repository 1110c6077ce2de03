package dev.parapet.core.admission;

import dev.parapet.core.limit.ConcurrencyGate;
import dev.parapet.core.limit.Gradient2Limit;
import dev.parapet.core.limit.LimitAlgorithm;
import dev.parapet.core.overload.OverloadLevel;
import java.util.EnumMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Admission for origin-bound work: a {@link ConcurrencyGate}, a short priority queue in front of
 * it, CoDel dropping from that queue, and shedding by priority class and request kind. It never
 * blocks the caller: {@link #offer} answers at once with admitted, queued (the ticket's listener
 * hears later, exactly once) or rejected with a {@link RejectReason}.
 *
 * <h2>Order</h2>
 *
 * Each request gets an effective class: its priority (1 critical .. 4 background), lowered to 4 for
 * {@link RequestKind#BACKGROUND} work and to at least 3 for {@link RequestKind#STALE_REFRESH}. The
 * queue is ordered by effective class, then kind, then arrival. That yields the seed 003 shed
 * order: background revalidation and prefetch, then stale-while-revalidate refreshes, then low
 * priority and bots, then ordinary traffic. Admission from the queue takes the most important,
 * oldest request; every drop (displacement, CoDel, overload) takes the least important, oldest one.
 * So a request is never shed while a less important one is admitted from the queue.
 *
 * <h2>Queue and CoDel</h2>
 *
 * When every slot is taken a request waits in a queue of at most {@code queueMax} (250). A full
 * queue refuses an arrival ({@link RejectReason#QUEUE_FULL}) unless the arrival is more important
 * than the least important queued request, which is then {@link RejectReason#DISPLACED}.
 *
 * <p>Controlled Delay (Nichols and Jacobson, "Controlling Queue Delay", ACM Queue 10(5), 2012; RFC
 * 8289) keeps the queue from standing: each time a slot frees up, the sojourn time of the request
 * about to leave the queue is checked. Once sojourns have stayed at or above {@code targetSojourn}
 * (20 ms) for a whole {@code interval} (100 ms), that is, the minimum sojourn over the interval is
 * above target, CoDel enters its dropping state and drops one request, then the next after {@code
 * interval / sqrt(count)}, dropping faster while the queue stands, until a sojourn falls below
 * target or the queue empties. Each drop takes the least important queued request ({@link
 * RejectReason#CODEL_DROP}), not the head, so dropping follows the shed order too.
 *
 * <h2>Threads</h2>
 *
 * The fast path (queue empty, slot free) is the gate's lock-free CAS. Queue changes happen under a
 * short lock that is never held while waiting or while calling a listener. A completing request
 * drains the queue on its own thread: after a slot frees, the queued request at the top gets it and
 * its listener runs there. An arrival that has to queue re-checks for a free slot after queueing
 * (and a completion checks the queue after freeing its slot), so a slot cannot free up unseen.
 */
public final class AdmissionController {
  /** Parapet's default queue bound ({@code admission.queue.max}). */
  public static final int DEFAULT_QUEUE_MAX = 250;

  /** Parapet's default CoDel target ({@code admission.queue.target_sojourn}, 20 ms). */
  public static final long DEFAULT_TARGET_SOJOURN_NANOS = 20_000_000L;

  /** Parapet's default CoDel interval ({@code admission.queue.interval}, 100 ms). */
  public static final long DEFAULT_INTERVAL_NANOS = 100_000_000L;

  static final int RANKS = 12;
  private static final int MIN_ACCEPTED_RANK_WHEN_SHEDDING = rank(2, RequestKind.ORDINARY);

  private final ConcurrencyGate gate;
  private final int queueMax;
  private final long targetNanos;
  private final long intervalNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private volatile @Nullable Partitions partitions;

  // Guarded by lock: one FIFO list per rank, highest rank admitted first.
  private final @Nullable AdmissionTicket[] heads = new AdmissionTicket[RANKS];
  private final @Nullable AdmissionTicket[] tails = new AdmissionTicket[RANKS];
  private int size;

  /** {@code size}, published for lock-free readers (fast path, drain check, metrics). */
  private volatile int queued;

  // CoDel state, guarded by lock.
  private boolean firstAboveSet;
  private long firstAboveNanos;
  private boolean dropping;
  private long dropNextNanos;
  private int dropCount;
  private int lastDropCount;

  private volatile OverloadLevel level = OverloadLevel.NONE;

  private final EnumMap<RejectReason, LongAdder> rejected = new EnumMap<>(RejectReason.class);
  private final LongAdder admittedFromQueue = new LongAdder();

  /**
   * @param algorithm the limit; the controller's gate owns it from now on
   * @param queueMax queue bound, {@code >= 0} (0: refuse when the limit is reached)
   * @param targetSojournNanos CoDel target, {@code > 0}
   * @param intervalNanos CoDel interval, {@code > 0}
   */
  public AdmissionController(
      LimitAlgorithm algorithm, int queueMax, long targetSojournNanos, long intervalNanos) {
    if (queueMax < 0) {
      throw new IllegalArgumentException("queueMax : " + queueMax + " (expected: >= 0)");
    }
    if (targetSojournNanos <= 0) {
      throw new IllegalArgumentException(
          "targetSojournNanos : " + targetSojournNanos + " (expected: > 0)");
    }
    if (intervalNanos <= 0) {
      throw new IllegalArgumentException("intervalNanos : " + intervalNanos + " (expected: > 0)");
    }
    this.queueMax = queueMax;
    this.targetNanos = targetSojournNanos;
    this.intervalNanos = intervalNanos;
    for (RejectReason reason : RejectReason.values()) {
      rejected.put(reason, new LongAdder());
    }
    this.gate = new ConcurrencyGate(algorithm, this::drain);
  }

  /**
   * Defaults from DESIGN.md: gradient2 (200, 20..2000), queue 250, target 20 ms, interval 100 ms.
   */
  public static AdmissionController withDefaults() {
    return withDefaults(Gradient2Limit.defaults());
  }

  /** {@code algorithm} with the default queue (250, 20 ms, 100 ms). */
  public static AdmissionController withDefaults(LimitAlgorithm algorithm) {
    return new AdmissionController(
        algorithm, DEFAULT_QUEUE_MAX, DEFAULT_TARGET_SOJOURN_NANOS, DEFAULT_INTERVAL_NANOS);
  }

  /**
   * Offers a request. Never blocks; allocation-free.
   *
   * @param ticket the caller's handle; must be idle (not queued, permit not active)
   * @param priority class 1 (critical) .. 4 (background)
   * @return {@link Decision#ADMITTED} (slot in {@code ticket.permit()}), {@link Decision#QUEUED}
   *     (the listener will hear) or {@link Decision#REJECTED} ({@code ticket.rejectReason()})
   */
  public Decision offer(AdmissionTicket ticket, int priority, RequestKind kind, long nowNanos) {
    if (priority < 1 || priority > 4) {
      throw new IllegalArgumentException("priority : " + priority + " (expected: in [1, 4])");
    }
    if (ticket.queued || ticket.permit().isActive()) {
      throw new IllegalStateException("ticket : " + ticket + " (expected: idle)");
    }
    ticket.priority = priority;
    ticket.kind = kind;
    ticket.rank = rank(priority, kind);
    ticket.rejectReason = null;
    if (refuses(level, ticket.rank)) {
      return reject(ticket, RejectReason.OVERLOAD);
    }
    Partitions parts = partitions;
    int p = ticket.partition;
    if (parts != null && p >= 0 && p < parts.size() && parts.underShare(p, gate.limit())) {
      // The partition's guaranteed share: admitted now, beyond the limit if need be.
      gate.acquireBeyondLimit(ticket.permit(), nowNanos);
      hold(ticket);
      return Decision.ADMITTED;
    }
    if (queued == 0 && gate.tryAcquire(ticket.permit(), nowNanos)) {
      hold(ticket);
      return Decision.ADMITTED;
    }
    if (queueMax == 0) {
      return reject(ticket, RejectReason.LIMIT_REACHED);
    }
    AdmissionTicket displaced = null;
    lock.lock();
    try {
      // Again under the lock: a level raised meanwhile has purged the queue before we get here.
      if (refuses(level, ticket.rank)) {
        return reject(ticket, RejectReason.OVERLOAD);
      }
      if (size == 0 && gate.tryAcquire(ticket.permit(), nowNanos)) {
        hold(ticket);
        return Decision.ADMITTED;
      }
      if (size >= queueMax) {
        AdmissionTicket victim = lowest();
        if (victim == null || victim.rank >= ticket.rank) {
          return reject(ticket, RejectReason.QUEUE_FULL);
        }
        unlink(victim);
        displaced = victim;
      }
      link(ticket, nowNanos);
    } finally {
      lock.unlock();
    }
    if (displaced != null) {
      notifyRejected(displaced, RejectReason.DISPLACED, nowNanos);
    }
    return drain(nowNanos, ticket);
  }

  /**
   * Takes a queued request out without telling its listener (its client went away). Returns whether
   * it was queued.
   */
  public boolean cancel(AdmissionTicket ticket) {
    lock.lock();
    try {
      if (!ticket.queued) {
        return false;
      }
      unlink(ticket);
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Sets the overload level (from the overload monitors). Raising it drops queued requests that the
   * new level refuses, least important first, telling their listeners on this thread.
   */
  public void overloadLevel(OverloadLevel newLevel, long nowNanos) {
    level = newLevel;
    if (!newLevel.shedsLowPriority()) {
      return; // disabling hedges and retries is not admission's business
    }
    for (; ; ) {
      AdmissionTicket victim;
      lock.lock();
      try {
        victim = lowest();
        if (victim == null || survivesShedding(victim.rank) || level != newLevel) {
          return;
        }
        unlink(victim);
      } finally {
        lock.unlock();
      }
      notifyRejected(victim, RejectReason.OVERLOAD, nowNanos);
    }
  }

  /**
   * Installs guaranteed shares of the limit by partition (the proxy's routes), or none. Requests in
   * flight give their slots back to the partitions they took them from.
   */
  public void partitions(@Nullable Partitions p) {
    this.partitions = p;
  }

  /** The partitions in force, or null. */
  public @Nullable Partitions partitions() {
    return partitions;
  }

  /**
   * Ends an admitted request: gives its partition's slot back, then completes its permit, as a
   * sample of the limit when {@code sample} (a success), else ignored.
   */
  public void complete(AdmissionTicket ticket, boolean sample, long nowNanos) {
    Partitions h = ticket.heldIn;
    if (h != null) {
      ticket.heldIn = null;
      h.gaveBack(ticket.partition);
    }
    if (sample) {
      ticket.permit().onSuccess(nowNanos);
    } else {
      ticket.permit().onIgnore(nowNanos);
    }
  }

  private void hold(AdmissionTicket ticket) {
    Partitions parts = partitions;
    int p = ticket.partition;
    if (parts != null && p >= 0 && p < parts.size()) {
      parts.took(p);
      ticket.heldIn = parts;
    }
  }

  /** The current overload level. */
  public OverloadLevel overloadLevel() {
    return level;
  }

  /** Requests waiting now. */
  public int queueDepth() {
    return queued;
  }

  /** Requests holding a slot now. */
  public int inflight() {
    return gate.inflight();
  }

  /** The current concurrency limit. */
  public int limit() {
    return gate.limit();
  }

  /** Requests refused or dropped for {@code reason} so far. */
  public long rejectedCount(RejectReason reason) {
    LongAdder count = rejected.get(reason);
    return count == null ? 0 : count.sum();
  }

  /** Requests that waited and then got a slot. */
  public long admittedFromQueueCount() {
    return admittedFromQueue.sum();
  }

  /** Permit completions after the first (ignored). */
  public long misuseCount() {
    return gate.misuseCount();
  }

  /**
   * Queue order: higher is admitted earlier and shed later. Effective class first (1 best), then
   * kind (ordinary, refresh, background).
   */
  static int rank(int priority, RequestKind kind) {
    int effectiveClass =
        switch (kind) {
          case ORDINARY -> priority;
          case STALE_REFRESH -> Math.max(priority, 3);
          case BACKGROUND -> 4;
        };
    int kindOrder =
        switch (kind) {
          case BACKGROUND -> 0;
          case STALE_REFRESH -> 1;
          case ORDINARY -> 2;
        };
    return (4 - effectiveClass) * 3 + kindOrder;
  }

  private static boolean refuses(OverloadLevel current, int rank) {
    return current.stopsAccepting() || (current.shedsLowPriority() && !survivesShedding(rank));
  }

  private static boolean survivesShedding(int rank) {
    return rank >= MIN_ACCEPTED_RANK_WHEN_SHEDDING;
  }

  private void drain(long nowNanos) {
    if (queued != 0) {
      drain(nowNanos, null);
    }
  }

  /**
   * Hands free slots to queued requests, most important first, with CoDel deciding on the way
   * whether to drop the least important one instead. Returns what became of {@code arrival} (if
   * given): it is not told through its listener, its offer returns the answer.
   */
  private Decision drain(long nowNanos, @Nullable AdmissionTicket arrival) {
    Decision arrivalDecision = Decision.QUEUED;
    for (; ; ) {
      AdmissionTicket chosen;
      boolean admit;
      lock.lock();
      try {
        AdmissionTicket best = highest();
        if (best == null) {
          firstAboveSet = false;
          return arrivalDecision;
        }
        if (gate.inflight() >= gate.limit()) {
          return arrivalDecision;
        }
        if (codelDrops(nowNanos, nowNanos - best.enqueuedNanos)) {
          chosen = lowest();
          admit = false;
        } else if (gate.tryAcquire(best.permit(), nowNanos)) {
          hold(best);
          chosen = best;
          admit = true;
        } else {
          return arrivalDecision;
        }
        if (chosen == null) {
          return arrivalDecision;
        }
        unlink(chosen);
      } finally {
        lock.unlock();
      }
      if (admit) {
        admittedFromQueue.increment();
        if (chosen == arrival) {
          arrivalDecision = Decision.ADMITTED;
        } else {
          chosen.listener.onAdmitted(chosen, nowNanos);
        }
      } else if (chosen == arrival) {
        arrivalDecision = reject(chosen, RejectReason.CODEL_DROP);
      } else {
        notifyRejected(chosen, RejectReason.CODEL_DROP, nowNanos);
      }
    }
  }

  /**
   * One CoDel decision at a dequeue opportunity (RFC 8289 section 5, with "drop" meaning drop the
   * least important queued request). Guarded by lock.
   */
  private boolean codelDrops(long nowNanos, long sojournNanos) {
    boolean okToDrop = false;
    if (sojournNanos - targetNanos < 0 || size <= 1) {
      firstAboveSet = false;
    } else if (!firstAboveSet) {
      firstAboveSet = true;
      firstAboveNanos = nowNanos + intervalNanos;
    } else {
      okToDrop = nowNanos - firstAboveNanos >= 0;
    }
    if (dropping) {
      if (!okToDrop) {
        dropping = false;
        return false;
      }
      if (nowNanos - dropNextNanos >= 0) {
        dropCount++;
        dropNextNanos = controlLaw(dropNextNanos, dropCount);
        return true;
      }
      return false;
    }
    if (!okToDrop) {
      return false;
    }
    dropping = true;
    // Re-entering soon after the last dropping state: resume near the rate that was reached.
    int delta = dropCount - lastDropCount;
    dropCount = delta > 1 && nowNanos - dropNextNanos - 16 * intervalNanos < 0 ? delta : 1;
    lastDropCount = dropCount;
    dropNextNanos = controlLaw(nowNanos, dropCount);
    return true;
  }

  private long controlLaw(long fromNanos, int count) {
    return fromNanos + (long) (intervalNanos / Math.sqrt(count));
  }

  private Decision reject(AdmissionTicket ticket, RejectReason reason) {
    ticket.rejectReason = reason;
    LongAdder count = rejected.get(reason);
    if (count != null) {
      count.increment();
    }
    return Decision.REJECTED;
  }

  private void notifyRejected(AdmissionTicket ticket, RejectReason reason, long nowNanos) {
    reject(ticket, reason);
    ticket.listener.onRejected(ticket, reason, nowNanos);
  }

  private @Nullable AdmissionTicket highest() {
    for (int r = RANKS - 1; r >= 0; r--) {
      AdmissionTicket head = heads[r];
      if (head != null) {
        return head;
      }
    }
    return null;
  }

  private @Nullable AdmissionTicket lowest() {
    for (int r = 0; r < RANKS; r++) {
      AdmissionTicket head = heads[r];
      if (head != null) {
        return head;
      }
    }
    return null;
  }

  private void link(AdmissionTicket ticket, long nowNanos) {
    int r = ticket.rank;
    ticket.enqueuedNanos = nowNanos;
    ticket.next = null;
    ticket.prev = tails[r];
    AdmissionTicket tail = tails[r];
    if (tail == null) {
      heads[r] = ticket;
    } else {
      tail.next = ticket;
    }
    tails[r] = ticket;
    ticket.queued = true;
    queued = ++size;
  }

  private void unlink(AdmissionTicket ticket) {
    int r = ticket.rank;
    AdmissionTicket prev = ticket.prev;
    AdmissionTicket next = ticket.next;
    if (prev == null) {
      heads[r] = next;
    } else {
      prev.next = next;
    }
    if (next == null) {
      tails[r] = prev;
    } else {
      next.prev = prev;
    }
    ticket.prev = null;
    ticket.next = null;
    ticket.queued = false;
    queued = --size;
  }

  @Override
  public String toString() {
    return "AdmissionController[limit="
        + limit()
        + ", inflight="
        + inflight()
        + ", queued="
        + queued
        + ", level="
        + level
        + "]";
  }
}
