package dev.parapet.proxy.cache;

import dev.parapet.proxy.http.ProxyError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

/**
 * Responses the cache makes: from a stored entry (a {@code Range} of it answered with 206 or 416,
 * {@link ByteRange}), or the 504 of {@code only-if-cached}.
 */
final class StoredAnswers {
  private StoredAnswers() {}

  /**
   * A response from a stored entry: the client's own conditional answered with 304 (§4.3.2), a HEAD
   * without content, {@code Age} (§5.1), {@code Cache-Status} after the upstream tiers' members.
   *
   * @param clientHeaders the fields the client sent (its conditionals)
   */
  static FullHttpResponse fromEntry(
      CacheServices cs,
      CachedResponse e,
      HttpHeaders clientHeaders,
      boolean head,
      long now,
      CacheStatus s,
      boolean withAge) {
    boolean notModified =
        e.status() == 200
            && Revalidation.clientNotModified(clientHeaders, e, cs.edge().wallMillis());
    int code = e.status();
    ByteRange range =
        code == 200 && !notModified && !head
            ? ByteRange.of(
                clientHeaders.get(HttpHeaderNames.RANGE),
                clientHeaders.get(HttpHeaderNames.IF_RANGE),
                e,
                e.bodyLength(),
                cs.edge().wallMillis())
            : null;
    boolean noBody = head || notModified || code == 204 || code == 304 || e.bodyLength() == 0;
    ByteBuf content = noBody ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(e.body());
    HttpResponseStatus status =
        notModified ? HttpResponseStatus.NOT_MODIFIED : HttpResponseStatus.valueOf(code);
    if (range != null) {
      if (range.satisfiable()) {
        content = content.slice((int) range.first(), (int) range.length());
        status = HttpResponseStatus.PARTIAL_CONTENT;
      } else {
        content = Unpooled.EMPTY_BUFFER;
        status = HttpResponseStatus.REQUESTED_RANGE_NOT_SATISFIABLE;
      }
    }
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
    HttpHeaders h = r.headers();
    h.set(e.headers());
    if (notModified) {
      h.remove(HttpHeaderNames.CONTENT_LENGTH);
      h.remove(HttpHeaderNames.CONTENT_TYPE);
    }
    if (range != null) {
      // RFC 9110 §14.4: the range sent, or */length for 416
      h.set(
          HttpHeaderNames.CONTENT_RANGE,
          range.satisfiable()
              ? "bytes " + range.first() + "-" + range.last() + "/" + e.bodyLength()
              : "bytes */" + e.bodyLength());
      h.set(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
      if (!range.satisfiable()) {
        h.remove(HttpHeaderNames.CONTENT_TYPE);
      }
    } else if (code == 200 && !notModified) {
      h.set(HttpHeaderNames.ACCEPT_RANGES, "bytes");
    }
    if (withAge) {
      h.set(HttpHeaderNames.AGE, Long.toString(e.ageSeconds(now)));
    }
    CacheStatus.addTo(h, s);
    return r;
  }

  /**
   * The stale copy {@code e} answered because its origin is slow ({@code stale_on_slow}): {@code
   * fwd=stale; ttl=-N; detail="stale slow-origin"}.
   */
  static FullHttpResponse slowOrigin(
      CacheServices cs, CachedResponse e, HttpHeaders clientHeaders, boolean head, long now) {
    return fromEntry(
        cs,
        e,
        clientHeaders,
        head,
        now,
        cs.status().fwd(CacheStatus.Fwd.STALE).ttl(e.ttlSeconds(now)).detail("stale slow-origin"),
        true);
  }

  /** 504 for {@code only-if-cached} with nothing usable (RFC 9111 §5.2.1.7). */
  static FullHttpResponse onlyIfCached(CacheServices cs, ByteBufAllocator alloc, CacheStatus s) {
    FullHttpResponse r =
        cs.responses()
            .build(
                alloc,
                ProxyError.RESPONSE_TIMEOUT,
                "only-if-cached and no usable stored response",
                null,
                -1);
    CacheStatus.addTo(r.headers(), s);
    return r;
  }
}
