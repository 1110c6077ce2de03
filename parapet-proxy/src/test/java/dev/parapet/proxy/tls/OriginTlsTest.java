package dev.parapet.proxy.tls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.breaker.State;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.runtime.ProxyRuntime;
import dev.parapet.proxy.testing.TestCertificates;
import dev.parapet.proxy.testing.TlsOrigin;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * HTTPS to origins, once per provider: a certificate from the configured CA is accepted; an
 * expired, untrusted or wrongly named one, and an origin that does not speak TLS, are 502s with RFC
 * 9209's TLS error types, and count as connect failures for the breaker.
 */
class OriginTlsTest {
  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();
  private TlsOrigin good;
  private TlsOrigin expired;
  private TlsOrigin untrusted;
  private ServerSocket plain;
  private ProxyRuntime runtime;
  private int port;

  private void start(String provider) throws Exception {
    TestCertificates.Ca ca = TestCertificates.ca("Origin CA");
    ca.write(dir.resolve("ca.pem"));
    ca.issue("edge.test").write(dir, "edge");
    Instant now = Instant.now();
    good = new TlsOrigin(ca.issue("origin.test"));
    expired =
        new TlsOrigin(
            ca.issue(now.minus(Duration.ofDays(9)), now.minus(Duration.ofDays(2)), "origin.test"));
    untrusted = new TlsOrigin(TestCertificates.ca("Stranger CA").issue("origin.test"));
    // Answers plain HTTP as soon as a connection opens, whatever it is sent: not TLS.
    plain = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
    ServerSocket listening = plain;
    Thread.ofVirtual()
        .start(() -> {
          while (!listening.isClosed()) {
            try (java.net.Socket s = listening.accept()) {
              s.getOutputStream()
                  .write(
                      "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
                          .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            } catch (java.io.IOException e) {
              // closed by the test, or the proxy hung up first
            }
          }
        });
    int admin;
    int tls;
    try (ServerSocket a = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        ServerSocket b = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        ServerSocket c = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = a.getLocalPort();
      admin = b.getLocalPort();
      tls = c.getLocalPort();
    }
    String trip = "retry: {attempts: 1}, breaker: {connect_failures: {count: 3, within: 1m}}";
    Path file = dir.resolve("parapet.yaml");
    Files.writeString(
        file,
        """
        name: origin-tls-test
        listen: 127.0.0.1:%d
        admin: {listen: 127.0.0.1:%d}
        tls:
          listen: 127.0.0.1:%d
          certificates: [{cert_file: edge.pem, key_file: edge-key.pem}]
          provider: %s
        origins:
          good: {hosts: [127.0.0.1:%d], tls: {sni: origin.test, ca_file: ca.pem}}
          expired: {hosts: [127.0.0.1:%d], tls: {sni: origin.test, ca_file: ca.pem}, %s}
          untrusted: {hosts: [127.0.0.1:%d], tls: {sni: origin.test}, %s}
          wrongname: {hosts: [127.0.0.1:%d], tls: {sni: other.test, ca_file: ca.pem}, %s}
          plain: {hosts: [127.0.0.1:%d], tls: {sni: origin.test, ca_file: ca.pem}, %s}
          insecure: {hosts: [127.0.0.1:%d], tls: {verify: false}}
        routes:
          - {match: {prefix: /good/}, origin: good, cache: off}
          - {match: {prefix: /expired/}, origin: expired, cache: off}
          - {match: {prefix: /untrusted/}, origin: untrusted, cache: off}
          - {match: {prefix: /wrongname/}, origin: wrongname, cache: off}
          - {match: {prefix: /plain/}, origin: plain, cache: off}
          - {match: {prefix: /insecure/}, origin: insecure, cache: off}
        """
            .formatted(
                port,
                admin,
                tls,
                provider,
                good.port(),
                expired.port(),
                trip,
                untrusted.port(),
                trip,
                good.port(),
                trip,
                plain.getLocalPort(),
                trip,
                untrusted.port()));
    runtime =
        ProxyRuntime.start(
            ConfigLoader.load(file).config(), file, Ticker.system(), RandomSource.seeded(1), 1);
  }

  @AfterEach
  void stop() {
    if (runtime != null) {
      runtime.close();
    }
    for (AutoCloseable c : new AutoCloseable[] {good, expired, untrusted, plain}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        // closing a test origin
      }
    }
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @ParameterizedTest
  @ValueSource(strings = {"openssl", "jdk"})
  void aCertificateFromTheConfiguredCaIsAccepted(String provider) throws Exception {
    start(provider);
    HttpResponse<String> r = get("/good/x");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("tls origin; proto=http");
    assertThat(get("/insecure/x").statusCode()).isEqualTo(200);
  }

  @ParameterizedTest
  @ValueSource(strings = {"openssl", "jdk"})
  void aBadCertificateIsA502TlsCertificateErrorAndTripsTheBreaker(String provider)
      throws Exception {
    start(provider);
    for (String route : new String[] {"expired", "untrusted", "wrongname"}) {
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> r = get("/" + route + "/x");
        assertThat(r.statusCode()).as(route).isEqualTo(502);
        assertThat(r.headers().firstValue("Proxy-Status"))
            .as(route)
            .hasValueSatisfying(
                v -> assertThat(v).startsWith("origin-tls-test; error=tls_certificate_error"));
      }
      // The connect fast-trip counted the three handshakes: the breaker is open.
      assertThat(
              runtime
                  .proxy()
                  .breakers()
                  .find(BreakerKey.of(Scope.ROUTE, "*/" + route + "/"))
                  .state())
          .as(route)
          .isEqualTo(State.OPEN);
      assertThat(get("/" + route + "/x").statusCode()).as(route).isEqualTo(503);
    }
    assertThat(expired.calls.get() + untrusted.calls.get()).isZero();
    // Nothing else on the proxy is disturbed.
    assertThat(get("/good/y").statusCode()).isEqualTo(200);
  }

  @ParameterizedTest
  @ValueSource(strings = {"openssl", "jdk"})
  void anOriginThatDoesNotSpeakTlsIsA502TlsProtocolError(String provider) throws Exception {
    start(provider);
    HttpResponse<String> r = get("/plain/x");
    assertThat(r.statusCode()).isEqualTo(502);
    assertThat(r.headers().firstValue("Proxy-Status"))
        .hasValueSatisfying(v -> assertThat(v).contains("error=tls_protocol_error"));
  }
}
