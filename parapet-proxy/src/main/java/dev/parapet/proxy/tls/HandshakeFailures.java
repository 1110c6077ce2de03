package dev.parapet.proxy.tls;

import java.security.cert.CertificateException;
import java.util.Locale;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * What a failed handshake with an origin was, for RFC 9209's {@code Proxy-Status} error types: the
 * origin's certificate was not accepted (untrusted, expired, not yet valid, another name: {@code
 * tls_certificate_error}), the handshake timed out ({@code connection_timeout}), or anything else
 * went wrong in TLS — no common protocol or cipher, an alert, garbage instead of TLS ({@code
 * tls_protocol_error}).
 *
 * <p>The JDK's provider reports certificate problems as a {@link CertificateException} somewhere in
 * the cause chain; OpenSSL reports them as {@code CERTIFICATE_VERIFY_FAILED}, with the JDK trust
 * manager's exception as a cause when the JDK's trust manager decided.
 */
public final class HandshakeFailures {
  /** A failed handshake, by kind. */
  public enum Kind {
    CERTIFICATE,
    TIMEOUT,
    PROTOCOL
  }

  private HandshakeFailures() {}

  /** The kind of {@code cause}, a handshake's failure. */
  public static Kind classify(Throwable cause) {
    if (cause instanceof io.netty.handler.ssl.SslHandshakeTimeoutException) {
      return Kind.TIMEOUT;
    }
    for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof CertificateException || t instanceof SSLPeerUnverifiedException) {
        return Kind.CERTIFICATE;
      }
      String m = t.getMessage();
      if (m != null && m.toUpperCase(Locale.ROOT).contains("CERTIFICATE_VERIFY_FAILED")) {
        return Kind.CERTIFICATE;
      }
    }
    return Kind.PROTOCOL;
  }
}
