package dev.parapet.proxy.flow;

import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.deadline.DeadlineHeader;
import dev.parapet.proxy.http.Downstream;
import dev.parapet.proxy.http.ForwardedHeaders;
import dev.parapet.proxy.http1.HeaderList;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.opentelemetry.api.trace.Span;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The request as it goes to the origin: its head rewritten for forwarding once (origin-form target,
 * hop-by-hop fields out, {@code Via}, {@code X-Forwarded-For}, {@code X-Forwarded-Proto} in) and
 * its remaining deadline set for each attempt; its body streamed to the attempt's connection, or
 * held — up to {@link #MAX_HELD_BODY}, then the client's reads pause — until there is one.
 *
 * <p>A replayable request (no body) is written whole by every attempt; a request with a body goes
 * to one attempt only (it is never retried or hedged), so the body is streamed, not kept.
 */
final class OutboundRequest {
  /** Request body bytes held while the origin connection is being made, before reads pause. */
  static final long MAX_HELD_BODY = 256 * 1024;

  // Header names as AsciiString constants: their hash is computed once, not per request.
  private static final AsciiString X_FORWARDED_FOR = HeaderList.token("X-Forwarded-For");
  private static final AsciiString X_FORWARDED_PROTO = HeaderList.token("X-Forwarded-Proto");
  private static final AsciiString HTTP = AsciiString.cached("http");
  private static final AsciiString HTTPS = AsciiString.cached("https");
  private static final AsciiString DEADLINE = HeaderList.token(DeadlineHeader.NAME);

  private final HttpRequest request;
  private final String originForm;
  private final boolean replayable;
  private final Client client;
  private final AsciiString via;
  private boolean rewritten;

  /** The client sent its last content (always true for a replayable request). */
  private boolean complete;

  private @Nullable List<HttpContent> held;
  private long heldBytes;

  /** Where body content goes as it arrives: the connection of the attempt that was sent. */
  private @Nullable Channel target;

  OutboundRequest(
      HttpRequest request, String originForm, boolean replayable, Client client, AsciiString via) {
    this.request = request;
    this.originForm = originForm;
    this.replayable = replayable;
    this.client = client;
    this.via = via;
    this.complete = replayable || request instanceof LastHttpContent;
  }

  /** Without a body, and idempotent (or its route opted in): it may be sent again. */
  static boolean replayable(HttpRequest request, boolean hasBody, boolean retryNonIdempotent) {
    return !hasBody && (RequestChecks.IDEMPOTENT.contains(request.method()) || retryNonIdempotent);
  }

  /** May go to the origin more than once: replayable, and not a background refresh. */
  boolean mayRetry(RequestKind kind) {
    return replayable && kind != RequestKind.STALE_REFRESH;
  }

  /** May be sent twice at once: retryable and idempotent, whatever the route allows for retries. */
  boolean mayHedge(RequestKind kind) {
    return mayRetry(kind) && RequestChecks.IDEMPOTENT.contains(request.method());
  }

  /**
   * Whether the whole request reached (or will reach) the origin with the attempt that was sent.
   */
  boolean complete() {
    return complete;
  }

  /** Writes the request for an attempt on {@code ch}: the head, then the body or what is held. */
  void sendTo(Channel ch, long usableNanos, Downstream client, @Nullable Span span) {
    // Void promises: no future object per write; a failed write reaches the origin connection's
    // exceptionCaught, which ends the attempt.
    ch.write(head(usableNanos, span), ch.voidPromise());
    if (replayable) {
      // A request passed on whole (no body, one message: the HTTP/1.1 decoder's way) went out in
      // one piece with its head; any other is ended here.
      if (!(request instanceof LastHttpContent)) {
        ch.write(LastHttpContent.EMPTY_LAST_CONTENT, ch.voidPromise());
      }
    } else {
      List<HttpContent> h = held;
      if (h != null) {
        for (HttpContent c : h) {
          ch.write(c, ch.voidPromise());
        }
        h.clear();
      }
      heldBytes = 0;
      target = ch;
    }
    ch.flush();
    if (!complete) {
      client.readRequestBody(ch.isWritable());
    }
  }

  /** A piece of the client's body (already checked): forwarded, held, or dropped if replayable. */
  void add(HttpContent c, Downstream client) {
    if (c instanceof LastHttpContent) {
      complete = true;
    }
    if (replayable) {
      ReferenceCountUtil.release(c); // no body: every attempt ends its request head itself
      return;
    }
    Channel o = target;
    if (o == null) {
      List<HttpContent> h = held;
      if (h == null) {
        h = new ArrayList<>(4);
        held = h;
      }
      h.add(c);
      heldBytes += c.content().readableBytes();
      if (heldBytes > MAX_HELD_BODY) {
        client.readRequestBody(false); // resumed once the origin connection takes what is held
      }
      return;
    }
    o.writeAndFlush(c, o.voidPromise());
    if (!o.isWritable()) {
      client.readRequestBody(false); // resumed when the origin connection drains
    }
  }

  /** The origin connection's writability changed: the client's body follows it. */
  void originWritable(boolean writable, Downstream client) {
    if (!complete && !replayable) {
      client.readRequestBody(writable);
    }
  }

  /** Releases what is held (the request ended without its body reaching the origin). */
  void discard() {
    List<HttpContent> h = held;
    if (h != null) {
      for (HttpContent c : h) {
        ReferenceCountUtil.release(c);
      }
      h.clear();
    }
    target = null;
  }

  /**
   * The request head for an attempt: rewritten in place once, its deadline (and, when traced, its
   * {@code traceparent}) set each time.
   */
  private HttpRequest head(long usableNanos, @Nullable Span span) {
    HttpRequest fwd = request;
    if (!rewritten) {
      rewritten = true;
      // The decoded request is ours alone: rewrite it in place rather than copying its headers.
      boolean chunked = HttpUtil.isTransferEncodingChunked(request);
      fwd = request.setUri(originForm).setProtocolVersion(HttpVersion.HTTP_1_1);
      HttpHeaders h = fwd.headers();
      ForwardedHeaders.stripHopByHop(h);
      if (chunked) {
        h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
      }
      ForwardedHeaders.appendVia(h, via);
      AsciiString ip = client.ipValue();
      if (ip != null) {
        String xff = h.get(X_FORWARDED_FOR);
        h.set(X_FORWARDED_FOR, xff == null ? ip : xff + ", " + ip);
      }
      // Left from the peer only when it is trusted (an untrusted peer's was stripped): the scheme
      // the client used at the edge, which an inner tier must pass on rather than its own hop's.
      if (!h.contains(X_FORWARDED_PROTO)) {
        h.set(X_FORWARDED_PROTO, client.secure() ? HTTPS : HTTP);
      }
    }
    // Whole milliseconds of at most a day: an int, set without a string (HeaderList writes digits).
    fwd.headers().setInt(DEADLINE, (int) DeadlineHeader.toMillis(usableNanos));
    if (span != null) {
      Tracing.inject(span, fwd.headers());
    }
    return fwd;
  }
}
