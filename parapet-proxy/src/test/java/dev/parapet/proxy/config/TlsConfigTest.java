package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.proxy.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tls:} and {@code origins.NAME.tls:} as {@code parapet validate} sees them: the files are
 * opened, and every problem is reported at its YAML path, all at once.
 */
class TlsConfigTest {
  @TempDir Path dir;
  private TestCertificates.Files2 good;
  private TestCertificates.Files2 other;
  private Path ca;

  @BeforeEach
  void certificates() throws Exception {
    TestCertificates.Ca authority = TestCertificates.ca("Test CA");
    good = authority.issue("edge.test").write(dir, "edge");
    other = authority.issue("other.test").write(dir, "other");
    ca = authority.write(dir.resolve("ca.pem"));
  }

  private static String config(String tls, String originTls) {
    return """
    listen: 127.0.0.1:8080
    %s
    origins:
      api:
        hosts: [127.0.0.1:9001]
        %s
    routes:
      - origin: api
    """
        .formatted(tls, originTls);
  }

  private ProxyConfig load(String yaml) throws InvalidConfigException {
    return ConfigLoader.parse(yaml, "t.yaml", dir).config();
  }

  private List<String> errors(String yaml) {
    try {
      load(yaml);
    } catch (InvalidConfigException e) {
      return e.errors().stream().map(ConfigProblem::toString).toList();
    }
    throw new AssertionError("accepted: " + yaml);
  }

  @Test
  void aValidBlockIsRead() throws Exception {
    ProxyConfig c =
        load(
            config(
                """
                tls:
                  listen: 127.0.0.1:8443
                  certificates:
                    - {cert_file: edge.pem, key_file: edge-key.pem}
                    - {cert_file: other.pem, key_file: other-key.pem}
                  protocols: [TLSv1.3]
                  provider: jdk
                """,
                "tls: {sni: api.example.com, ca_file: ca.pem}"));
    TlsConfig t = c.tls();
    assertThat(t).isNotNull();
    assertThat(t.listen()).isEqualTo(new HostPort("127.0.0.1", 8443));
    assertThat(t.certificates())
        .containsExactly(
            new TlsConfig.Certificate(good.cert(), good.key()),
            new TlsConfig.Certificate(other.cert(), other.key()));
    assertThat(t.protocols()).containsExactly("TLSv1.3");
    assertThat(t.provider()).isEqualTo(TlsConfig.Provider.JDK);
    assertThat(c.origin("api").tls())
        .isEqualTo(new OriginTlsConfig("api.example.com", true, ca, null, null));
  }

  @Test
  void withoutTheBlocksThereIsNoTls() throws Exception {
    ProxyConfig c = load(config("", ""));
    assertThat(c.tls()).isNull();
    assertThat(c.origin("api").tls()).isNull();
    assertThat(load(config("", "tls: on")).origin("api").tls()).isEqualTo(OriginTlsConfig.DEFAULTS);
  }

  @Test
  void everyBadFileIsReportedAtItsPathAtOnce() throws Exception {
    Files.writeString(dir.resolve("garbage.pem"), "not a certificate\n");
    List<String> errors =
        errors(
            config(
                """
                tls:
                  certificates:
                    - {cert_file: missing.pem, key_file: edge-key.pem}
                    - {cert_file: edge.pem, key_file: other-key.pem}
                    - {cert_file: garbage.pem, key_file: garbage.pem}
                    - {cert_file: edge.pem}
                  protocols: [TLSv1.3, SSLv3, tls1.1]
                """,
                "tls: {ca_file: garbage.pem, cert_file: edge.pem}"));
    assertThat(errors)
        .anySatisfy(e ->
            assertThat(e)
                .startsWith("tls.certificates[0].cert_file: ")
                .contains("missing.pem", "cannot be read"))
        .anySatisfy(e ->
            assertThat(e)
                .startsWith("tls.certificates[1].key_file: ")
                .contains("does not match the certificate"))
        .anySatisfy(e ->
            assertThat(e).startsWith("tls.certificates[2].cert_file: ").contains("certificate"))
        .anySatisfy(e ->
            assertThat(e).startsWith("tls.certificates[2].key_file: ").contains("no private key"))
        .anySatisfy(e -> assertThat(e).startsWith("tls.certificates[3].key_file: required"))
        .anySatisfy(e -> assertThat(e).startsWith("tls.protocols[1]: ").contains("'SSLv3'"))
        .anySatisfy(e -> assertThat(e).startsWith("tls.protocols[2]: ").contains("'tls1.1'"))
        .anySatisfy(e -> assertThat(e).startsWith("origins.api.tls.ca_file: "))
        .anySatisfy(e -> assertThat(e).startsWith("origins.api.tls.key_file: required"));
    assertThat(errors).hasSize(9);
  }

  @Test
  void anExpiredOrNotYetValidCertificateIsRefused() throws Exception {
    TestCertificates.Ca authority = TestCertificates.ca("Dates CA");
    Instant now = Instant.now();
    authority
        .issue(now.minus(Duration.ofDays(10)), now.minus(Duration.ofDays(1)), "old.test")
        .write(dir, "old");
    authority
        .issue(now.plus(Duration.ofDays(1)), now.plus(Duration.ofDays(10)), "new.test")
        .write(dir, "new");
    List<String> errors =
        errors(
            config(
                """
                tls:
                  certificates:
                    - {cert_file: old.pem, key_file: old-key.pem}
                    - {cert_file: new.pem, key_file: new-key.pem}
                """,
                ""));
    assertThat(errors)
        .satisfiesExactly(
            e -> assertThat(e).startsWith("tls.certificates[0].cert_file: ").contains("expired at"),
            e ->
                assertThat(e)
                    .startsWith("tls.certificates[1].cert_file: ")
                    .contains("not valid before"));
  }

  @Test
  void aPkcs1KeyIsRefusedWithTheCommandThatConvertsIt() throws Exception {
    Files.writeString(
        dir.resolve("rsa.pem"),
        "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
    assertThat(
            errors(config("tls: {certificates: [{cert_file: edge.pem, key_file: rsa.pem}]}", "")))
        .singleElement()
        .asString()
        .startsWith("tls.certificates[0].key_file: ")
        .contains("RSA PRIVATE KEY", "openssl pkcs8 -topk8 -nocrypt");
  }

  @Test
  void theTlsListenerMustNotShareAnAddress() {
    assertThat(
            errors(
                config(
                    """
                    tls:
                      listen: 127.0.0.1:8080
                      certificates: [{cert_file: edge.pem, key_file: edge-key.pem}]
                    """,
                    "")))
        .singleElement()
        .asString()
        .startsWith("tls.listen: must differ");
  }

  @Test
  void aMissingCertificateListIsRequired() {
    assertThatThrownBy(() -> load(config("tls: {listen: 127.0.0.1:8443}", "")))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("tls.certificates: required");
  }

  @Test
  void keyMatchingIsDecidedBySigning() throws Exception {
    TestCertificates.Issued a = TestCertificates.ca("X").issue("a.test");
    TestCertificates.Issued b = TestCertificates.ca("Y").issue("b.test");
    assertThat(PemFiles.matches(a.key(), a.certificate())).isTrue();
    assertThat(PemFiles.matches(b.key(), a.certificate())).isFalse();
  }
}
