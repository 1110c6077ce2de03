package dev.parapet.sim.replay;

/**
 * A line that cannot be read as a record. Stackless: bad lines may be many (up to {@code
 * --max-bad-lines}), and the message says all there is to say.
 */
final class BadLineException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  BadLineException(String message) {
    super(message, null, false, false);
  }
}
