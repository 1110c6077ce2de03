package dev.parapet.proxy.tls;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A new connection to the HTTPS listener: the SNI handler (which puts the chosen certificate's
 * SslHandler in its place), then {@link AlpnDispatch}, which installs the protocol's handlers once
 * the handshake is done.
 */
public final class TlsInitializer extends ChannelInitializer<Channel> {
  private final ServerTls tls;
  private final Consumer<ChannelPipeline> http1;
  private final @Nullable Consumer<ChannelPipeline> http2;

  public TlsInitializer(
      ServerTls tls, Consumer<ChannelPipeline> http1, @Nullable Consumer<ChannelPipeline> http2) {
    this.tls = tls;
    this.http1 = http1;
    this.http2 = http2;
  }

  @Override
  protected void initChannel(Channel ch) {
    ch.pipeline().addLast("sni", tls.sniHandler()).addLast("alpn", new AlpnDispatch(http1, http2));
  }
}
