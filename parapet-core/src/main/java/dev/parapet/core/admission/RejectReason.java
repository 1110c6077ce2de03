package dev.parapet.core.admission;

/** Why a request was refused or dropped from the queue. Label values for shed metrics. */
public enum RejectReason {
  /** Every slot taken and no queue configured. */
  LIMIT_REACHED,
  /** Every slot taken and the queue full of requests at least as important. */
  QUEUE_FULL,
  /** Dropped from a standing queue by CoDel (sojourn above target for a whole interval). */
  CODEL_DROP,
  /** Pushed out of a full queue by a more important arrival. */
  DISPLACED,
  /** The overload level sheds this class, or stops accepting altogether. */
  OVERLOAD
}
