package dev.parapet.proxy.tls;

import dev.parapet.proxy.config.TlsConfig;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;

/**
 * Which TLS implementation {@code tls.provider} means here: OpenSSL (BoringSSL through
 * netty-tcnative) where its native library loads — faster handshakes and less garbage than the
 * JDK's — else the JDK's own. {@code openssl} insists (no start without it), {@code jdk} forces the
 * fallback, so both can be tested and measured on one machine.
 */
public final class TlsProviders {
  private TlsProviders() {}

  /**
   * The provider for {@code wanted}.
   *
   * @throws IllegalArgumentException when {@code openssl} is asked for and cannot load
   */
  public static SslProvider choose(TlsConfig.Provider wanted) {
    return switch (wanted) {
      case JDK -> SslProvider.JDK;
      case OPENSSL -> {
        if (!OpenSsl.isAvailable()) {
          throw new IllegalArgumentException(
              "tls.provider : openssl cannot load here ("
                  + OpenSsl.unavailabilityCause()
                  + ") (expected: auto or jdk)");
        }
        yield SslProvider.OPENSSL;
      }
      case AUTO -> OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
    };
  }

  /** How the start-up line names {@code provider}: {@code OpenSSL (BoringSSL)} or {@code JDK}. */
  public static String describe(SslProvider provider) {
    return provider == SslProvider.JDK
        ? "JDK " + System.getProperty("java.version")
        : "OpenSSL (" + OpenSsl.versionString() + ")";
  }
}
