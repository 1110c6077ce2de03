package dev.parapet.proxy.server;

import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.Http2Config;
import dev.parapet.proxy.flow.ProxyContext;
import dev.parapet.proxy.http.ProxyError;
import dev.parapet.proxy.metrics.ProxyMetrics;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.timeout.IdleStateHandler;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The HTTP/2 side of a listener: how a client connection becomes HTTP/2, and the connections that
 * are open (to send them GOAWAY on drain or overload). One per {@link ProxyServer}.
 *
 * <p><b>Entry point</b>: {@link #install(ChannelPipeline)} turns a connection whose next bytes are
 * the HTTP/2 client preface into an HTTP/2 server connection. The cleartext listener calls it when
 * it sees the preface (h2c with prior knowledge, {@link CleartextProtocols}); a TLS listener calls
 * it once ALPN selected {@code h2}, on a pipeline whose TLS handler is already in place, with
 * nothing of HTTP/1.1 in it.
 *
 * <pre>
 *  socket ─► [TLS] ─► Http2HeadTimer ─► Http2FrameCodec ─► Http2MultiplexHandler ─► Http2Connection
 *                      (header blocks    (frames, HPACK,     │ one child channel per stream:
 *                       within the        flow control,      └► Http2StreamDownstream ─► RequestFlow
 *                       header timeout)   abuse limits)
 * </pre>
 *
 * <p>The codec is built with the limits of {@code http2:} and Netty's flood protections, each of
 * which ends the connection with GOAWAY (a connection error) while other connections go on:
 *
 * <ul>
 *   <li>RST_STREAM frames: at most {@code resets.count} per {@code resets.within} (rapid reset,
 *       CVE-2023-44487);
 *   <li>control frames (PING and SETTINGS acknowledgements, RST_STREAM) queued because the client
 *       does not read: at most {@link #MAX_QUEUED_CONTROL_FRAMES};
 *   <li>DATA frames without content and without END_STREAM in a row: at most {@link
 *       #MAX_EMPTY_DATA_FRAMES};
 *   <li>CONTINUATION frames of a header block: the header list is bounded by {@code
 *       max_header_list_size} as it is decoded, and small CONTINUATION frames by {@link
 *       #MAX_SMALL_CONTINUATION_FRAMES} (CVE-2024-27316).
 * </ul>
 */
public final class Http2Connections {
  /** Control frames the client leaves unread before it is a flood (as Envoy's default). */
  static final int MAX_QUEUED_CONTROL_FRAMES = 1000;

  /** Consecutive empty DATA frames before it is a flood (Netty's default). */
  static final int MAX_EMPTY_DATA_FRAMES = 2;

  /** Small CONTINUATION frames of one header block before it is a flood (Netty's default). */
  static final int MAX_SMALL_CONTINUATION_FRAMES = 16;

  /** Why a GOAWAY went out: the label values of {@code parapet_h2_goaway_total}. */
  static final List<String> GOAWAY_REASONS =
      List.of(
          "drain",
          "overload",
          "idle",
          "header_timeout",
          "flood",
          "protocol_error",
          "internal_error",
          "closed");

  private final Supplier<ProxyContext> contexts;
  private final Http2Config config;
  private final ProxyMetrics metrics;
  private final Ticker ticker;
  private final BooleanSupplier draining;
  private final String listener;
  private final long idleNanos;
  private final Set<Http2Connection> open = ConcurrentHashMap.newKeySet();

  Http2Connections(
      Supplier<ProxyContext> contexts,
      Http2Config config,
      ProxyMetrics metrics,
      Ticker ticker,
      BooleanSupplier draining,
      String listener,
      Duration idleTimeout) {
    this.contexts = contexts;
    this.config = config;
    this.metrics = metrics;
    this.ticker = ticker;
    this.draining = draining;
    this.listener = listener;
    this.idleNanos = idleTimeout.toNanos();
    for (String reason : GOAWAY_REASONS) {
      metrics.declare("parapet.h2.goaway", "listener", listener, "reason", reason);
    }
    metrics.declare("parapet.h2.stream.errors", "listener", listener, "kind", "client_reset");
    metrics.declare("parapet.h2.stream.errors", "listener", listener, "kind", "malformed");
    metrics.gauge("parapet.h2.connections", "listener", listener, open::size);
  }

  /**
   * Makes {@code p} an HTTP/2 server connection: adds the frame codec, the stream multiplexer and
   * the connection handler at its end. Called on the channel's event loop, before the client
   * preface is read (the preface is the first thing the codec reads).
   */
  public void install(ChannelPipeline p) {
    Http2Settings settings =
        Http2Settings.defaultSettings()
            .maxConcurrentStreams(config.maxConcurrentStreams())
            .maxHeaderListSize(config.maxHeaderListSize())
            .initialWindowSize(config.initialWindowSize());
    int windowSeconds =
        (int) Math.max(1, Math.min(Integer.MAX_VALUE, config.resetWindow().toSeconds()));
    Http2FrameCodec codec =
        Http2FrameCodecBuilder.forServer()
            .initialSettings(settings)
            // After GOAWAY the streams it covers finish however long they take (their routes'
            // deadlines bound them); a stop closes what is left after its drain timeout.
            .gracefulShutdownTimeoutMillis(-1)
            .validateHeaders(true)
            .decoderEnforceMaxRstFramesPerWindow(config.maxResets(), windowSeconds)
            .encoderEnforceMaxQueuedControlFrames(MAX_QUEUED_CONTROL_FRAMES)
            .decoderEnforceMaxConsecutiveEmptyDataFrames(MAX_EMPTY_DATA_FRAMES)
            .decoderEnforceMaxSmallContinuationFrames(MAX_SMALL_CONTINUATION_FRAMES)
            .build();
    Http2Connection connection = new Http2Connection(this, ticker);
    codec.connection().addListener(connection.listener());
    long headerTimeoutNanos = context().settings().headerTimeout().toNanos();
    p.addLast("h2-idle", new IdleStateHandler(0, 0, idleNanos, TimeUnit.NANOSECONDS))
        .addLast("h2-head-timer", new Http2HeadTimer(connection, headerTimeoutNanos, ticker))
        .addLast("h2", codec)
        .addLast("h2-streams", new Http2MultiplexHandler(connection.streams()))
        .addLast("h2-connection", connection);
  }

  /** Sends every open HTTP/2 connection GOAWAY ({@code reason}: drain, overload). Any thread. */
  public void goAwayAll(String reason) {
    for (Http2Connection c : open) {
      c.goAway(reason);
    }
  }

  /** HTTP/2 connections open now. */
  public int openConnections() {
    return open.size();
  }

  // ---- from the connections

  ProxyContext context() {
    return contexts.get();
  }

  Http2Config config() {
    return config;
  }

  boolean draining() {
    return draining.getAsBoolean();
  }

  void opened(Http2Connection c) {
    open.add(c);
  }

  void closed(Http2Connection c) {
    open.remove(c);
  }

  void goAwaySent(String reason) {
    metrics.count("parapet.h2.goaway", "listener", listener, "reason", reason);
  }

  void streamReset() {
    metrics.count("parapet.h2.stream.errors", "listener", listener, "kind", "client_reset");
  }

  /** A header block was not complete within the header timeout (as HTTP/1.1's 408). */
  void headerTimedOut() {
    metrics.localRejection(ProxyError.HEADER_TIMEOUT.ordinal());
  }

  void malformed() {
    metrics.count("parapet.h2.stream.errors", "listener", listener, "kind", "malformed");
  }
}
