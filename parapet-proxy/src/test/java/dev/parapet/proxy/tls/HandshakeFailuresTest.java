package dev.parapet.proxy.tls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.testing.TestCertificates;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** Which handshake failures are the certificate's fault, which the protocol's. */
class HandshakeFailuresTest {
  private static SSLHandshakeException handshake(String message, Throwable cause) {
    SSLHandshakeException e = new SSLHandshakeException(message);
    e.initCause(cause);
    return e;
  }

  @Test
  void certificateProblemsAnywhereInTheChainAreTheCertificates() {
    assertThat(
            HandshakeFailures.classify(
                handshake(
                    "PKIX path validation failed",
                    new CertificateException(
                        new CertPathValidatorException(
                            "expired", new CertificateExpiredException("NotAfter"))))))
        .isEqualTo(HandshakeFailures.Kind.CERTIFICATE);
    assertThat(
            HandshakeFailures.classify(
                new SSLHandshakeException(
                    "error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED")))
        .isEqualTo(HandshakeFailures.Kind.CERTIFICATE);
  }

  @Test
  void timeoutsAndEverythingElse() {
    assertThat(HandshakeFailures.classify(new SslHandshakeTimeoutException("10000 ms")))
        .isEqualTo(HandshakeFailures.Kind.TIMEOUT);
    assertThat(
            HandshakeFailures.classify(
                new SSLHandshakeException("Received fatal alert: protocol_version")))
        .isEqualTo(HandshakeFailures.Kind.PROTOCOL);
  }

  @Test
  void namesAreTheDnsSansElseTheCommonName() {
    TestCertificates.Ca ca = TestCertificates.ca("Names CA");
    assertThat(CertificateNames.of(ca.issue("A.test", "*.b.test", "127.0.0.1").certificate()))
        .containsExactly("a.test", "*.b.test");
    // A CA certificate has no SANs: its CN is its name.
    assertThat(CertificateNames.of(ca.certificate())).containsExactly("names ca");
  }
}
