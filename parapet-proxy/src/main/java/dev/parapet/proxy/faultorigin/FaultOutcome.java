package dev.parapet.proxy.faultorigin;

import java.util.Locale;

/** What the origin did with one request; the stats count each. */
public enum FaultOutcome {
  /** Answered with the plan's status and body (or 304 to a matching If-None-Match). */
  OK,
  /** Answered with the plan's error status. */
  ERROR,
  /** Closed the connection with SO_LINGER 0 (a TCP RST) before sending anything. */
  RESET,
  /** Sent the headers and half the body, then reset the connection. */
  MID_BODY_RESET,
  /** Read the request and never answered. */
  HANG,
  /** Answered with bytes that are not an HTTP response, then closed. */
  GARBAGE,
  /** The request itself could not be parsed: 400 and close. */
  BAD_REQUEST;

  /** The JSON name: {@code mid_body_reset}. */
  public String jsonName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
