package dev.parapet.core.admission;

/**
 * What a request is for, besides its priority class: work nobody waits for sheds before work
 * somebody waits for. Order of declaration is shed order within one effective class.
 */
public enum RequestKind {
  /** Background revalidation or prefetch: shed first (its effective class is always 4). */
  BACKGROUND,
  /**
   * A stale-while-revalidate refresh: the client already has the stale copy, so it sheds before
   * user-facing traffic (its effective class is at least 3).
   */
  STALE_REFRESH,
  /** A request a client is waiting for. */
  ORDINARY
}
