package dev.parapet.core.retry;

import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.outcome.StatusSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What makes a failed attempt worth retrying (the proxy's {@code retry.on}): {@code
 * connect_failure} (refused, reset or timed out while connecting: the request never reached the
 * origin; and a connection closed before any response, {@link Outcome#RESET}, as a pooled
 * connection the origin closed just as the request went out is — the caller retries only requests
 * that may be repeated), {@code timeout} (no response within the attempt's timeout) and response
 * statuses written as {@code 503}, {@code 5xx} or {@code 500-504}.
 */
public final class RetryOn {
  /** DESIGN.md's default: {@code [connect_failure, 503]}. */
  public static final RetryOn DEFAULTS = new RetryOn(true, false, List.of("503"));

  private final boolean connectFailure;
  private final boolean timeout;
  private final List<String> statusSpec;
  private final StatusSet statuses;

  /**
   * What to retry.
   *
   * @param statusSpec entries as {@link StatusSet#parse} reads them
   * @throws IllegalArgumentException for a malformed status entry
   */
  public RetryOn(boolean connectFailure, boolean timeout, List<String> statusSpec) {
    this.connectFailure = connectFailure;
    this.timeout = timeout;
    this.statusSpec = List.copyOf(statusSpec);
    this.statuses = statusSpec.isEmpty() ? StatusSet.none() : StatusSet.parse(statusSpec);
  }

  public boolean connectFailure() {
    return connectFailure;
  }

  public boolean timeout() {
    return timeout;
  }

  /** Response statuses worth a retry. */
  public StatusSet statuses() {
    return statuses;
  }

  /**
   * Whether an attempt that ended without a response, with {@code failure} as its evidence, is
   * worth a retry: a connect failure or a timeout when configured; nothing else (a malformed
   * response may have had effects at the origin).
   */
  public boolean retries(Outcome failure) {
    return switch (failure) {
      case CONNECT_FAILURE, RESET -> connectFailure;
      case TIMEOUT -> timeout;
      default -> false;
    };
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RetryOn r
        && r.connectFailure == connectFailure
        && r.timeout == timeout
        && r.statusSpec.equals(statusSpec);
  }

  @Override
  public int hashCode() {
    return Objects.hash(connectFailure, timeout, statusSpec);
  }

  /** As written in configuration: {@code [connect_failure, 503]}. */
  @Override
  public String toString() {
    List<String> all = new ArrayList<>();
    if (connectFailure) {
      all.add("connect_failure");
    }
    if (timeout) {
      all.add("timeout");
    }
    all.addAll(statusSpec);
    return all.toString();
  }
}
