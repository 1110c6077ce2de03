package dev.parapet.proxy.tls;

import dev.parapet.proxy.config.OriginTlsConfig;
import dev.parapet.proxy.config.PemFiles;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * HTTPS to one origin pool ({@code origins.NAME.tls}): one client context for all its hosts. The
 * server name sent in SNI and checked against the origin's certificate is {@code sni} when set,
 * else the host's name as written in {@code hosts} (an IP address is checked against the
 * certificate's IP addresses and sends no SNI). Trust is the system's unless {@code ca_file} names
 * the CAs; {@code verify: false} trusts any certificate for any name (a test origin, never
 * production).
 *
 * <p>The handshake is part of connecting: {@code HostPool} hands out a connection only once it is
 * done, and a failed handshake is a connect failure ({@link HandshakeFailures}).
 */
public final class OriginTls {
  private final SslContext context;
  private final @Nullable String sni;

  private OriginTls(SslContext context, @Nullable String sni) {
    this.context = context;
    this.sni = sni;
  }

  /**
   * The client context of {@code config} on {@code provider}.
   *
   * @param where the YAML path of the block, for messages
   * @throws IllegalArgumentException when a file cannot be used
   */
  public static OriginTls of(OriginTlsConfig config, SslProvider provider, String where) {
    SslContextBuilder b =
        SslContextBuilder.forClient().sslProvider(provider).protocols("TLSv1.3", "TLSv1.2");
    try {
      if (!config.verify()) {
        b.trustManager(InsecureTrustManagerFactory.INSTANCE).endpointIdentificationAlgorithm(null);
      } else {
        b.endpointIdentificationAlgorithm("HTTPS");
        Path ca = config.caFile();
        if (ca != null) {
          b.trustManager(PemFiles.certificates(ca));
        }
      }
      Path cert = config.certFile();
      Path key = config.keyFile();
      if (cert != null && key != null) {
        List<java.security.cert.X509Certificate> chain = PemFiles.certificates(cert);
        b.keyManager(PemFiles.privateKey(key), chain);
      }
      return new OriginTls(b.build(), config.sni());
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException(where + " : " + e.getMessage(), e);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          where + " : cannot be read: " + e.getMessage() + " (expected: readable PEM files)", e);
    }
  }

  /**
   * The handler that makes a connection to {@code address} HTTPS, first in its pipeline; its
   * handshake may take {@code timeoutMillis}.
   */
  public SslHandler newHandler(
      ByteBufAllocator alloc, InetSocketAddress address, long timeoutMillis) {
    String name = sni != null ? sni : address.getHostString();
    SslHandler h = context.newHandler(alloc, name, address.getPort());
    h.setHandshakeTimeoutMillis(timeoutMillis);
    return h;
  }
}
