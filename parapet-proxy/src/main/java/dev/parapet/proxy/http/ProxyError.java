package dev.parapet.proxy.http;

import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * Every response the proxy makes itself, with its RFC 9209 {@code Proxy-Status} error type and the
 * RFC 9457 problem {@code type} it carries. One place, so the wire signals stay consistent.
 */
public enum ProxyError {
  /** No route matches host and path: never an open proxy. */
  NO_ROUTE(HttpResponseStatus.NOT_FOUND, "destination_not_found", "no route"),
  /** The breaker for this scope is open (or half-open and busy, ramping, forced open). */
  BREAKER_OPEN(HttpResponseStatus.SERVICE_UNAVAILABLE, "destination_unavailable", "breaker open"),
  /**
   * Admission control shed the request (concurrency limit and queue full, CoDel, overload): the
   * proxy answered without trying the next hop (RFC 9209 {@code proxy_internal_response}).
   */
  SHED(HttpResponseStatus.SERVICE_UNAVAILABLE, "proxy_internal_response", "load shed"),
  /**
   * The origin's fleet-wide ceiling ({@code origins.NAME.fleet_limit}) had no token for the
   * attempt: the fleet together already sends the origin all it may take.
   */
  FLEET_LIMIT(
      HttpResponseStatus.SERVICE_UNAVAILABLE, "proxy_internal_response", "fleet ceiling reached"),
  /** The client has {@code admission.per_client.max_inflight} requests in flight already. */
  CLIENT_LIMIT(
      HttpResponseStatus.TOO_MANY_REQUESTS,
      "proxy_internal_response",
      "too many requests from this client"),
  /** The origin pool's connection or pending limits are reached. */
  CONNECTION_LIMIT(
      HttpResponseStatus.SERVICE_UNAVAILABLE, "connection_limit_reached", "origin pool full"),
  /** The deadline left too little time to try the origin at all. */
  DEADLINE_TOO_SHORT(
      HttpResponseStatus.GATEWAY_TIMEOUT, "http_response_timeout", "deadline below min_useful"),
  /** The attempt ran out of time waiting for the origin's response. */
  RESPONSE_TIMEOUT(
      HttpResponseStatus.GATEWAY_TIMEOUT, "http_response_timeout", "origin did not answer in time"),
  /** Connecting to the origin timed out. */
  CONNECT_TIMEOUT(HttpResponseStatus.GATEWAY_TIMEOUT, "connection_timeout", "connect timed out"),
  /** The origin refused the connection. */
  CONNECTION_REFUSED(HttpResponseStatus.BAD_GATEWAY, "connection_refused", "connection refused"),
  /**
   * The origin's TLS certificate was not accepted: untrusted, expired or not yet valid, or for
   * another name.
   */
  TLS_CERTIFICATE_ERROR(
      HttpResponseStatus.BAD_GATEWAY, "tls_certificate_error", "origin certificate not accepted"),
  /** The TLS handshake with the origin failed otherwise (no common version or cipher, an alert). */
  TLS_PROTOCOL_ERROR(
      HttpResponseStatus.BAD_GATEWAY, "tls_protocol_error", "TLS handshake with origin failed"),
  /** The origin closed or reset the connection before a complete response head. */
  CONNECTION_TERMINATED(
      HttpResponseStatus.BAD_GATEWAY, "connection_terminated", "origin closed the connection"),
  /** The origin answered something that is not valid HTTP. */
  MALFORMED_RESPONSE(
      HttpResponseStatus.BAD_GATEWAY, "http_protocol_error", "malformed response from origin"),
  /** The request is malformed or ambiguous (smuggling attempts included): nothing was forwarded. */
  BAD_REQUEST(HttpResponseStatus.BAD_REQUEST, "http_request_error", "malformed request"),
  /** The client did not send a complete request head in time (slow client). */
  HEADER_TIMEOUT(HttpResponseStatus.REQUEST_TIMEOUT, "http_request_error", "request head timeout"),
  /** The request body is larger than allowed. */
  BODY_TOO_LARGE(
      HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "http_request_error", "request body too large"),
  /** The request came back to this proxy (its name is already in {@code Via}). */
  LOOP_DETECTED(HttpResponseStatus.valueOf(508), "proxy_loop_detected", "request loop");

  private final HttpResponseStatus status;
  private final String proxyStatusError;
  private final String title;
  private final String problemType;

  ProxyError(HttpResponseStatus status, String proxyStatusError, String title) {
    this.status = status;
    this.proxyStatusError = proxyStatusError;
    this.title = title;
    this.problemType =
        "https://parapet.dev/problems/"
            + name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  public HttpResponseStatus status() {
    return status;
  }

  /** The RFC 9209 error type. */
  public String proxyStatusError() {
    return proxyStatusError;
  }

  /** Short human title for the problem body. */
  public String title() {
    return title;
  }

  /** The problem {@code type} URI, stable for clients to match on. */
  public String problemType() {
    return problemType;
  }
}
