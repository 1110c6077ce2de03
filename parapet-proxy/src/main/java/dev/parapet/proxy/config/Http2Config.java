package dev.parapet.proxy.config;

import java.time.Duration;

/**
 * {@code http2:} what one HTTP/2 client connection may ask of the proxy. The limits are advertised
 * in the server's SETTINGS frame and enforced by the codec; a client that goes past the abuse
 * limits gets GOAWAY and is closed (docs/http2.md).
 *
 * @param maxConcurrentStreams streams one connection may have open at once
 *     (SETTINGS_MAX_CONCURRENT_STREAMS); a stream beyond it is refused with RST_STREAM
 * @param maxHeaderListSize bytes of one request's decoded header list, as RFC 9113 counts them
 *     (name + value + 32 per field; SETTINGS_MAX_HEADER_LIST_SIZE); a larger one is refused
 * @param initialWindowSize bytes of request body a client may send on a stream before the proxy
 *     reads it (SETTINGS_INITIAL_WINDOW_SIZE): request bodies are flow controlled by it
 * @param maxResets RST_STREAM frames a client may send within {@code resetWindow}: more is a rapid
 *     reset attack (CVE-2023-44487)
 * @param resetWindow the window {@code maxResets} counts in
 */
public record Http2Config(
    int maxConcurrentStreams,
    int maxHeaderListSize,
    int initialWindowSize,
    int maxResets,
    Duration resetWindow) {
  public static final Http2Config DEFAULTS =
      new Http2Config(100, 32 * 1024, 65_535, 200, Duration.ofSeconds(30));

  public Http2Config {
    if (maxConcurrentStreams < 1) {
      throw new IllegalArgumentException(
          "max_concurrent_streams : " + maxConcurrentStreams + " (expected: >= 1)");
    }
    if (maxHeaderListSize < 1024) {
      throw new IllegalArgumentException(
          "max_header_list_size : " + maxHeaderListSize + " (expected: >= 1024)");
    }
    if (initialWindowSize < 1) {
      throw new IllegalArgumentException(
          "initial_window_size : " + initialWindowSize + " (expected: >= 1)");
    }
    if (maxResets < 1 || resetWindow.isNegative() || resetWindow.isZero()) {
      throw new IllegalArgumentException(
          "resets : " + maxResets + " within " + resetWindow + " (expected: >= 1 within > 0s)");
    }
  }
}
