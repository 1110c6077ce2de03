package dev.parapet.proxy.flow;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import java.net.URI;
import org.jspecify.annotations.Nullable;

/**
 * Where a request goes: the authority it names, its path (what routes match and the ring hash keys)
 * and the origin-form target the origin is sent, from an origin-form or absolute-form request
 * target (RFC 9112 §3.2).
 *
 * @param host the authority, or null when an origin-form request has no Host
 * @param path the path, without the query
 * @param originForm the path and query
 */
record RequestTarget(@Nullable String host, String path, String originForm) {

  /**
   * The target of {@code request}, whose target as the client sent it is {@code target}; null when
   * it is neither origin-form nor absolute-form ({@link #expected} says what was). An absolute-form
   * target's authority replaces the request's Host field (RFC 9112 §3.2.2), so the route, the cache
   * key and the Host the origin sees are always the same authority: otherwise {@code GET
   * http://victim/page} with {@code Host: attacker} would be stored under victim's key with
   * attacker's content.
   */
  static @Nullable RequestTarget of(HttpRequest request, String target) {
    if (target.indexOf('#') >= 0) {
      return null; // RFC 9112 §3.2: a client does not send a fragment
    }
    if (target.startsWith("/")) {
      int q = target.indexOf('?');
      return new RequestTarget(
          request.headers().get(HttpHeaderNames.HOST),
          q < 0 ? target : target.substring(0, q),
          target);
    }
    URI u = RequestChecks.absoluteForm(target);
    if (u == null) {
      return null;
    }
    String authority = u.getRawAuthority();
    request.headers().set(HttpHeaderNames.HOST, authority);
    String path = u.getRawPath().isEmpty() ? "/" : u.getRawPath();
    return new RequestTarget(
        authority, path, path + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery()));
  }

  /** What a target that {@link #of} refused was expected to be. */
  static String expected(String target) {
    return target.indexOf('#') >= 0
        ? "no fragment: a client does not send one"
        : "/path or http://host[:port]/path";
  }
}
