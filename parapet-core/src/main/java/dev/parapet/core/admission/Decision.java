package dev.parapet.core.admission;

/** What {@link AdmissionController#offer} did with a request. */
public enum Decision {
  /** The request holds a slot now, in its ticket's permit. */
  ADMITTED,
  /** The request waits; its listener hears exactly once, admitted or rejected. */
  QUEUED,
  /** The request was refused; {@link AdmissionTicket#rejectReason()} says why. */
  REJECTED
}
