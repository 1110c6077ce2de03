package dev.parapet.core.admission;

import dev.parapet.core.limit.Permit;
import org.jspecify.annotations.Nullable;

/**
 * A caller-owned, reusable request handle for {@link AdmissionController}: it carries the listener,
 * the {@link Permit} that holds the slot once admitted, and intrusive queue links, so offering,
 * queueing and releasing allocate nothing. One ticket serves one request at a time; reuse it once
 * its permit is completed or it was rejected.
 */
public final class AdmissionTicket {
  final AdmissionListener listener;
  private final Permit permit = new Permit();

  // Queue state: guarded by the controller's lock (queued is volatile for the reuse check).
  @Nullable AdmissionTicket prev;
  @Nullable AdmissionTicket next;
  long enqueuedNanos;
  volatile boolean queued;

  int priority = 2;
  RequestKind kind = RequestKind.ORDINARY;
  int rank;
  volatile @Nullable RejectReason rejectReason;

  /** The partition (route) whose share this request counts against; -1 for none. */
  int partition = -1;

  /** The partitions it holds a slot in, until {@link AdmissionController#complete}. */
  @Nullable Partitions heldIn;

  /** A ticket whose queued outcome goes to {@code listener}. */
  public AdmissionTicket(AdmissionListener listener) {
    this.listener = listener;
  }

  /**
   * Counts the request against partition {@code p}'s guaranteed share ({@link Partitions}); set
   * before {@link AdmissionController#offer}. Negative: no partition.
   */
  public AdmissionTicket partition(int p) {
    this.partition = p;
    return this;
  }

  /** The slot; complete it with {@code onSuccess/onIgnore/onDropped} when the request ends. */
  public Permit permit() {
    return permit;
  }

  /** The priority class of the last offer, 1 (critical) to 4 (background). */
  public int priority() {
    return priority;
  }

  /** The kind of the last offer. */
  public RequestKind kind() {
    return kind;
  }

  /** Why the last offer was refused or dropped, or {@code null}. */
  public @Nullable RejectReason rejectReason() {
    return rejectReason;
  }

  /** Whether the request waits in a queue now. */
  public boolean isQueued() {
    return queued;
  }

  @Override
  public String toString() {
    return "AdmissionTicket[priority="
        + priority
        + ", kind="
        + kind
        + (queued ? ", queued" : "")
        + (permit.isActive() ? ", admitted" : "")
        + "]";
  }
}
