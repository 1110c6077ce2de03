package dev.parapet.proxy.tls;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place a TLS connection's protocol is chosen, once the handshake has finished: ALPN's
 * {@code http/1.1} (or no ALPN at all) gets the same HTTP/1.1 handlers as the plain listener;
 * ALPN's {@code h2} gets the HTTP/2 handlers when the listener has them. {@code h2} is advertised
 * only then ({@link ServerTls}), so a client that negotiates it anyway broke the protocol and is
 * disconnected.
 */
public final class AlpnDispatch extends ApplicationProtocolNegotiationHandler {
  private static final Logger LOG = LoggerFactory.getLogger(AlpnDispatch.class);

  private final Consumer<ChannelPipeline> http1;
  private final @Nullable Consumer<ChannelPipeline> http2;

  /**
   * @param http1 adds the HTTP/1.1 handlers to the end of a pipeline
   * @param http2 adds the HTTP/2 handlers, or null when the listener serves no HTTP/2
   */
  public AlpnDispatch(Consumer<ChannelPipeline> http1, @Nullable Consumer<ChannelPipeline> http2) {
    super(ApplicationProtocolNames.HTTP_1_1); // no ALPN: HTTP/1.1
    this.http1 = http1;
    this.http2 = http2;
  }

  @Override
  protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
    Consumer<ChannelPipeline> h2 = http2;
    if (ApplicationProtocolNames.HTTP_1_1.equals(protocol)) {
      http1.accept(ctx.pipeline());
    } else if (ApplicationProtocolNames.HTTP_2.equals(protocol) && h2 != null) {
      h2.accept(ctx.pipeline());
    } else {
      ctx.close(); // a protocol that was never offered
    }
  }

  @Override
  protected void handshakeFailure(ChannelHandlerContext ctx, Throwable cause) {
    // Scanners and clients that distrust the certificate do this all day: not a warning.
    LOG.debug("TLS handshake with {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
    ctx.close();
  }
}
