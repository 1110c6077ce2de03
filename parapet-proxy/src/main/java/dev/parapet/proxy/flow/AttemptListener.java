package dev.parapet.proxy.flow;

import dev.parapet.core.outcome.Outcome;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import org.jspecify.annotations.Nullable;

/**
 * How an {@link UpstreamAttempt} reports to the {@link Exchange} that owns it — the one interface
 * between them, as Envoy's upstream requests report to their router through {@code
 * onUpstreamHeaders/Data/Reset}. The exchange alone picks the winner, retries and records; an
 * attempt never reaches into it. Called on the exchange's event loop.
 */
interface AttemptListener {
  /** The attempt has a connection: write the request on it. */
  void onConnected(UpstreamAttempt attempt, Channel origin);

  /** An interim (1xx) response of the origin, before its final head. The listener owns it. */
  void onInterim(UpstreamAttempt attempt, HttpResponse interim);

  /** The origin's final response head. The listener owns it. */
  void onResponseHead(UpstreamAttempt attempt, HttpResponse head);

  /** A piece of the response body, the last one a {@code LastHttpContent}. The listener owns it. */
  void onResponseContent(UpstreamAttempt attempt, HttpContent content);

  /**
   * The attempt failed ({@link UpstreamAttempt#error()} says how).
   *
   * @param evidence what the failure says about the origin, or null when it was local
   */
  void onAttemptFailed(UpstreamAttempt attempt, @Nullable Outcome evidence);

  /** The origin connection's writability changed: the request body pauses or resumes. */
  void onOriginWritable(UpstreamAttempt attempt, boolean writable);
}
