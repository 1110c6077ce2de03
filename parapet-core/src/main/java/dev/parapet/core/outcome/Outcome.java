package dev.parapet.core.outcome;

/**
 * What one origin attempt told us about the origin, decided before anything is recorded.
 *
 * <p>Seed 000: "Timeouts, TCP connection failures, TLS handshake errors, and even 429s from an
 * overwhelmed origin are all signals that should count toward your breaker's failure budget", and a
 * response slower than the latency objective is "a half-failure". Seed 002: "an HTTP 404 produced
 * promptly by a healthy service is usually different from a connection timeout", and "locally
 * rejected calls" are not fresh evidence about the remote system.
 *
 * <p>Each outcome has a {@link Kind}: {@link Kind#FAILURE} (weight 1.0), {@link Kind#SLOW} (weight
 * configured by the policy, 0.5 by default), {@link Kind#SUCCESS} (weight 0) or {@link
 * Kind#IGNORED} (not evidence at all). Connect failures are failures that additionally feed the
 * breaker's fast trip; a connection closed after the request was sent ({@link #RESET}) is not one:
 * an origin that reads a request and drops the connection is failing that request, not down.
 */
public enum Outcome {
  /** A good response in time; a prompt 404 is a healthy origin. */
  SUCCESS(Kind.SUCCESS),
  /** An otherwise good response slower than the slow-call threshold. */
  SLOW(Kind.SLOW),
  /** A response whose status is configured as failure (500, 502, 503, 504, 429 by default). */
  FAILURE_STATUS(Kind.FAILURE),
  /** The attempt ran out of time waiting for the origin. */
  TIMEOUT(Kind.FAILURE),
  /** Connection refused, reset or timed out while connecting: the request never left. */
  CONNECT_FAILURE(Kind.FAILURE),
  /**
   * The connection closed or reset after the request was sent, before the response was complete: a
   * failure, but not evidence that the origin cannot be reached (no fast trip), and one the origin
   * may have acted on.
   */
  RESET(Kind.FAILURE),
  /** The TLS handshake with the origin failed. */
  TLS_FAILURE(Kind.FAILURE),
  /** The origin answered something that is not valid HTTP. */
  MALFORMED_RESPONSE(Kind.FAILURE),
  /** The client gave up first: says nothing about the origin. */
  CLIENT_CANCELLED(Kind.IGNORED),
  /** A hedged attempt lost the race and was cancelled. */
  HEDGE_LOST(Kind.IGNORED),
  /** The proxy refused the call itself (open breaker, shed, pool full): never origin evidence. */
  LOCAL_REJECTION(Kind.IGNORED);

  /** How an outcome counts in a window. */
  public enum Kind {
    SUCCESS,
    SLOW,
    FAILURE,
    IGNORED
  }

  private final Kind kind;

  Outcome(Kind kind) {
    this.kind = kind;
  }

  /** How this outcome counts. */
  public Kind kind() {
    return kind;
  }

  /** True for outcomes that count against the origin with full weight. */
  public boolean isFailure() {
    return kind == Kind.FAILURE;
  }

  /** True for outcomes that are not evidence about the origin. */
  public boolean isIgnored() {
    return kind == Kind.IGNORED;
  }
}
