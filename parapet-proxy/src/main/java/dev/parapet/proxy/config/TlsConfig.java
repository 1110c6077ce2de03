package dev.parapet.proxy.config;

import java.nio.file.Path;
import java.util.List;

/**
 * The {@code tls:} block: the HTTPS listener beside the plain one. Every file was read and checked
 * when the configuration was loaded ({@link TlsConfigReader}); the runtime reads them again when it
 * builds the contexts (at start and on every reload), so a renewed certificate is picked up.
 *
 * @param listen where the HTTPS listener binds
 * @param certificates in file order; SNI picks one by the names in each, the first is the default
 * @param protocols the TLS versions offered, as JSSE names them ({@code TLSv1.3}, {@code TLSv1.2})
 * @param provider which TLS implementation to use
 */
public record TlsConfig(
    HostPort listen, List<Certificate> certificates, List<String> protocols, Provider provider) {

  /** What {@code protocols} is when not written. */
  public static final List<String> DEFAULT_PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  /** The protocol names accepted: older versions are broken and refused rather than offered. */
  public static final List<String> KNOWN_PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  public TlsConfig {
    certificates = List.copyOf(certificates);
    protocols = List.copyOf(protocols);
  }

  /**
   * One certificate chain and its private key (PEM files; the key unencrypted PKCS#8, RSA, EC or
   * Ed25519).
   */
  public record Certificate(Path certFile, Path keyFile) {}

  /** {@code tls.provider}: which TLS implementation the listener (and the origin pools) use. */
  public enum Provider {
    /** OpenSSL (BoringSSL through netty-tcnative) where it loads, else the JDK's. */
    AUTO,
    /** OpenSSL only; the proxy does not start where it cannot load. */
    OPENSSL,
    /** The JDK's own provider (JSSE). */
    JDK
  }
}
