package dev.parapet.proxy.faultorigin;

/**
 * A fault plan value that cannot be accepted, in the form "what, expected, found": {@code
 * error_rate: expected a percentage in [0%, 100%], found '150%'}.
 *
 * <p>{@link #field()} uses the JSON names of the control API ({@code error_rate}, {@code
 * paths./slow/.status}); the command line renders the same error with its flag names ({@code
 * --error-rate}), so one validation serves both.
 */
public final class PlanException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String field;
  private final String expected;
  private final String found;

  /** A problem with {@code field}: it expected {@code expected} and found {@code found}. */
  public PlanException(String field, String expected, String found) {
    super(field + ": expected " + expected + ", found " + found);
    this.field = field;
    this.expected = expected;
    this.found = found;
  }

  /** The JSON name of the offending field, with its path ({@code paths./api/.status}). */
  public String field() {
    return field;
  }

  /** What a valid value looks like. */
  public String expected() {
    return expected;
  }

  /** What was given. */
  public String found() {
    return found;
  }

  /** The same problem, one level deeper: {@code status} becomes {@code paths./api/.status}. */
  PlanException under(String prefix) {
    return new PlanException(prefix + field, expected, found);
  }

  /** Quotes a found value so empty strings and spaces stay visible. */
  static String quoted(String text) {
    return "'" + text + "'";
  }
}
