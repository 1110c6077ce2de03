package dev.parapet.core.admission;

/** What the overload monitors ask admission to do. */
public enum OverloadLevel {
  /** Admit by limit and queue only. */
  NORMAL,
  /**
   * Refuse effective classes 3 and 4 (low priority, bots, refreshes, background work) and drop them
   * from the queue; classes 1 and 2 go on as usual.
   */
  SHED_LOW,
  /**
   * Refuse every new request and drop classes 3 and 4 from the queue; what is queued in classes 1
   * and 2 still drains as slots free.
   */
  STOP_ACCEPTING
}
