package dev.parapet.core.breaker;

import java.util.EnumMap;
import java.util.Map;

/**
 * Every legal state change, in one table (the idea of Resilience4j's {@code StateTransition}).
 * Anything not listed is a bug and {@link #of} throws.
 *
 * <pre>
 *            trip                backoff elapsed            2 of 3 probes ok          ramp done
 *  CLOSED ─────────► OPEN ───────────────────► HALF_OPEN ─────────────────► RAMPING ─────────► CLOSED
 *                     ▲                            │ probe failed / too few ok   │ trip
 *                     └────────────────────────────┴─────────────────────────────┘
 *  Operators: any state ─► FORCED_OPEN | DISABLED | CLOSED (force close / reset).
 * </pre>
 */
public enum Transition {
  CLOSED_TO_OPEN(State.CLOSED, State.OPEN),
  CLOSED_TO_FORCED_OPEN(State.CLOSED, State.FORCED_OPEN),
  CLOSED_TO_DISABLED(State.CLOSED, State.DISABLED),
  OPEN_TO_HALF_OPEN(State.OPEN, State.HALF_OPEN),
  OPEN_TO_CLOSED(State.OPEN, State.CLOSED),
  OPEN_TO_FORCED_OPEN(State.OPEN, State.FORCED_OPEN),
  OPEN_TO_DISABLED(State.OPEN, State.DISABLED),
  HALF_OPEN_TO_OPEN(State.HALF_OPEN, State.OPEN),
  HALF_OPEN_TO_RAMPING(State.HALF_OPEN, State.RAMPING),
  HALF_OPEN_TO_CLOSED(State.HALF_OPEN, State.CLOSED),
  HALF_OPEN_TO_FORCED_OPEN(State.HALF_OPEN, State.FORCED_OPEN),
  HALF_OPEN_TO_DISABLED(State.HALF_OPEN, State.DISABLED),
  RAMPING_TO_CLOSED(State.RAMPING, State.CLOSED),
  RAMPING_TO_OPEN(State.RAMPING, State.OPEN),
  RAMPING_TO_FORCED_OPEN(State.RAMPING, State.FORCED_OPEN),
  RAMPING_TO_DISABLED(State.RAMPING, State.DISABLED),
  FORCED_OPEN_TO_CLOSED(State.FORCED_OPEN, State.CLOSED),
  FORCED_OPEN_TO_DISABLED(State.FORCED_OPEN, State.DISABLED),
  DISABLED_TO_CLOSED(State.DISABLED, State.CLOSED),
  DISABLED_TO_FORCED_OPEN(State.DISABLED, State.FORCED_OPEN);

  private static final Map<State, Map<State, Transition>> TABLE = new EnumMap<>(State.class);

  static {
    for (Transition t : values()) {
      TABLE.computeIfAbsent(t.from, k -> new EnumMap<>(State.class)).put(t.to, t);
    }
  }

  private final State from;
  private final State to;

  Transition(State from, State to) {
    this.from = from;
    this.to = to;
  }

  /** The state left. */
  public State from() {
    return from;
  }

  /** The state entered. */
  public State to() {
    return to;
  }

  /** True when the table allows {@code from -> to}. */
  public static boolean isLegal(State from, State to) {
    Map<State, Transition> row = TABLE.get(from);
    return row != null && row.containsKey(to);
  }

  /**
   * The transition {@code from -> to}.
   *
   * @throws IllegalStateException when the table does not allow it
   */
  public static Transition of(State from, State to) {
    Map<State, Transition> row = TABLE.get(from);
    Transition t = row == null ? null : row.get(to);
    if (t == null) {
      throw new IllegalStateException(
          "transition : " + from + " -> " + to + " (expected: one listed in Transition)");
    }
    return t;
  }
}
