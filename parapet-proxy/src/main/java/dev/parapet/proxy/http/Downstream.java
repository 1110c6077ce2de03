package dev.parapet.proxy.http;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

/**
 * What one request answers into, whatever the protocol: an HTTP/1.1 connection (one request at a
 * time) implements it, an HTTP/2 stream would. The request flow writes the response here and never
 * learns the wire; a decorator wraps it to record or substitute what passes (the edge cache tees a
 * response into storage, or answers a 5xx with a stale copy), as Finagle's filters wrap a service.
 *
 * <p>A response is either streamed — {@link #head}, then {@link #content} until a {@link
 * LastHttpContent} — or made whole here ({@link #answer}, {@link #error}); {@link #reset} ends a
 * streamed one that cannot be completed. After the response is complete nothing more is written.
 * Every method runs on {@link #eventLoop()}; written messages are owned by the downstream.
 *
 * <p>The downstream adds what belongs to this hop and its wire: {@code Via} on every response,
 * framing, {@code Connection} on HTTP/1.1.
 */
public interface Downstream {
  /** The event loop the request runs on: its timers and callbacks hop here. */
  EventLoop eventLoop();

  /** For responses made here. */
  ByteBufAllocator alloc();

  /**
   * The origin's response head, its hop-by-hop fields removed; its content follows.
   *
   * @param proxyStatus this hop's {@code Proxy-Status} member for the response (a fallback pool
   *     answered, say), or null
   */
  void head(HttpResponse head, @Nullable String proxyStatus);

  /**
   * An interim (1xx) response of the origin, its hop-by-hop fields removed: {@code 100 Continue},
   * {@code 103 Early Hints}. It comes before {@link #head} and answers nothing: the final response
   * follows. A downstream that can pass it on writes it at once, unless its final response has
   * started or its wire cannot carry it (an HTTP/1.0 client); it is never stored. This default
   * drops it, which loses nothing a client needs (a {@code 103} is a hint; a client that sent
   * {@code Expect: 100-continue} is answered {@code 100} by its connection).
   */
  default void interim(HttpResponse interim) {
    ReferenceCountUtil.release(interim);
  }

  /**
   * No response head can come before {@code atNanos} (the proxy's ticker): an attempt failed and
   * the retry that replaces it waits until then (its backoff, or the origin's {@code Retry-After}).
   * A decorator that would answer by then anyway may answer now (the edge cache's {@code
   * stale_on_slow}: its timer would run out before the retry is even sent); this default does
   * nothing, and so does a downstream that merely passes responses on.
   */
  default void noHeadBefore(long atNanos) {}

  /** A piece of the origin's response body; a {@link LastHttpContent} completes the response. */
  void content(HttpContent content);

  /** A complete response made here: a cache hit, a stale copy, a merged 304. */
  void answer(FullHttpResponse response);

  /**
   * The proxy's own answer for {@code error} ({@link LocalResponses}); a decorator may answer
   * otherwise (a stale copy instead of a 503 from an open breaker).
   */
  void error(ProxyError error, String detail, FullHttpResponse response);

  /**
   * Ends a streamed response that cannot be completed (the origin failed after its head went out):
   * HTTP/1.1 closes the connection, which is the only honest end of a truncated body.
   */
  void reset(ProxyError error, String detail);

  /** Whether the client takes more now; the flow pauses the origin's reads while it does not. */
  boolean isWritable();

  /**
   * Pauses or resumes reading the request's body (while its origin connection cannot take more).
   */
  void readRequestBody(boolean on);
}
