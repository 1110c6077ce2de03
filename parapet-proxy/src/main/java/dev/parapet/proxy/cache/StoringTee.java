package dev.parapet.proxy.cache;

import dev.parapet.proxy.http.Downstream;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

/**
 * The tee into storage of one storable origin response on {@link CachingDownstream}'s path: each
 * piece of the body is copied into a {@link Recorder} as it streams on to the client; the last one
 * makes the entry, which is stored and completes the request's collapsed flight (its waiters are
 * answered from it). A body larger than the largest object stored, or one the store refuses, fails
 * the flight instead ("not shared": the waiters fetch for themselves); the client gets it all the
 * same.
 *
 * <p>The response head is held until the first content: {@code Cache-Status} says {@code stored}
 * only if that content ends the body and the store took it, never as a promise that a cut-off body
 * or a refused store breaks. The client waits for nothing: the HTTP/1.1 connection flushes a head
 * with the first content anyway. A response that stops before (reset, client gone) leaves its
 * decorator answered or gone, so the head is never sent.
 */
final class StoringTee {
  private static final String TOO_LARGE = "larger than the largest object stored";

  private final CachingDownstream c;
  private @Nullable Recorder recorder;

  /** The response head, until the first content. */
  private @Nullable HttpResponse head;

  private final @Nullable String proxyStatus;
  private final CacheStatus status;

  StoringTee(
      CachingDownstream c,
      Recorder recorder,
      HttpResponse head,
      @Nullable String proxyStatus,
      CacheStatus status) {
    this.c = c;
    this.recorder = recorder;
    this.head = head;
    this.proxyStatus = proxyStatus;
    this.status = status;
  }

  /** Whether the response head is still held (no content has come yet). */
  boolean holdsHead() {
    return head != null;
  }

  /**
   * One piece of the body: recorded, then passed to {@code client} behind the held head — or, when
   * {@code client} is null (the request was answered stale before the origin's head), dropped with
   * the head after recording.
   */
  void content(HttpContent content, @Nullable Downstream client) {
    boolean stored = record(content);
    HttpResponse h = head;
    head = null;
    if (client == null) {
      ReferenceCountUtil.release(h);
      content.release();
      return;
    }
    if (h != null) {
      CacheStatus.addTo(h.headers(), stored ? status.stored() : status);
      CachedResponse.stripTags(h.headers());
      client.head(h, proxyStatus);
    }
    client.content(content);
  }

  /** Whether {@code content} ended the body and its entry was stored. */
  private boolean record(HttpContent content) {
    Recorder r = recorder;
    if (r == null) {
      return false;
    }
    if (!r.add(content.content())) {
      recorder = null;
      c.endFlight(null, FetchFailed.notShared(TOO_LARGE));
      return false;
    }
    if (!(content instanceof LastHttpContent)) {
      return false;
    }
    recorder = null;
    CachedResponse e = r.finish(c.clientHeaders(), c.startNanos, c.heuristic);
    if (!c.edge.store().store(c.requireKey(), e)) {
      c.endFlight(null, FetchFailed.notShared(TOO_LARGE));
      return false;
    }
    c.cs.count(EdgeCache.Status.STORED);
    c.endFlight(e, null);
    return true;
  }
}
