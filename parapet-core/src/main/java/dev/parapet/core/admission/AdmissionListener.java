package dev.parapet.core.admission;

/**
 * Hears how a queued request ends, exactly once. Called on the thread that found the slot (usually
 * the one completing another request) or that dropped the request, never under a lock; must be
 * quick and must not throw.
 */
public interface AdmissionListener {

  /** The request now holds a slot in {@code ticket.permit()}; complete it when done. */
  void onAdmitted(AdmissionTicket ticket, long nowNanos);

  /** The request left the queue without a slot. */
  void onRejected(AdmissionTicket ticket, RejectReason reason, long nowNanos);
}
