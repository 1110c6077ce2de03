package dev.parapet.proxy.tls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.runtime.ProxyRuntime;
import dev.parapet.proxy.testing.TestCertificates;
import dev.parapet.proxy.testing.TestOrigin;
import dev.parapet.proxy.testing.Tools;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The HTTPS listener with real clients on loopback (curl, openssl s_client, the JDK's SSLSocket),
 * once per provider: OpenSSL (BoringSSL) and the JDK's fallback.
 */
class TlsListenerTest {
  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();
  private TestOrigin origin;
  private ProxyRuntime runtime;
  private TestCertificates.Ca ca;
  private Path caFile;
  private int port;
  private int tlsPort;
  private int adminPort;

  private void start(String provider) throws Exception {
    origin = new TestOrigin();
    ca = TestCertificates.ca("Parapet Test CA");
    caFile = ca.write(dir.resolve("ca.pem"));
    ca.issue("a.test").write(dir, "a");
    ca.issue("*.b.test").write(dir, "b");
    try (ServerSocket a = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        ServerSocket b = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        ServerSocket c = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = a.getLocalPort();
      tlsPort = b.getLocalPort();
      adminPort = c.getLocalPort();
    }
    Files.writeString(dir.resolve("admin.token"), "t0ken\n");
    Path file = dir.resolve("parapet.yaml");
    Files.writeString(
        file,
        """
        name: tls-test
        listen: 127.0.0.1:%d
        admin: {listen: 127.0.0.1:%d, token_file: admin.token}
        tls:
          listen: 127.0.0.1:%d
          certificates:
            - {cert_file: a.pem, key_file: a-key.pem}
            - {cert_file: b.pem, key_file: b-key.pem}
          provider: %s
        origins:
          api: {hosts: [127.0.0.1:%d]}
        routes:
          - match: {prefix: /c/}
            origin: api
            cache: {default_ttl: 60s}
          - origin: api
            cache: off
        """
            .formatted(port, adminPort, tlsPort, provider, origin.port()));
    runtime =
        ProxyRuntime.start(
            ConfigLoader.load(file).config(), file, Ticker.system(), RandomSource.seeded(1), 1);
    assertThat(runtime.proxy().tls()).isNotNull();
    assertThat(runtime.proxy().tls().provider().name())
        .isEqualTo(provider.toUpperCase(Locale.ROOT));
  }

  @AfterEach
  void stop() {
    if (runtime != null) {
      runtime.close();
    }
    if (origin != null) {
      origin.close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"openssl", "jdk"})
  void curlSpeaksHttp11OverTlsAndTheOriginHearsHttps(String provider) throws Exception {
    Tools.require("curl");
    start(provider);
    Tools.Run r =
        Tools.run(
            List.of(
                "curl",
                "-sS",
                "--cacert",
                caFile.toString(),
                "--resolve",
                "a.test:" + tlsPort + ":127.0.0.1",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code} %{http_version}",
                "--http1.1",
                "https://a.test:" + tlsPort + "/x"));
    assertThat(r.output()).isEqualTo("200 1.1");
    assertThat(header(origin.seenHeaders.get(0), "X-Forwarded-Proto")).isEqualTo("https");

    // The plain listener beside it still says http.
    assertThat(
            http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/y")).build(),
                    HttpResponse.BodyHandlers.discarding())
                .statusCode())
        .isEqualTo(200);
    assertThat(header(origin.seenHeaders.get(1), "X-Forwarded-Proto")).isEqualTo("http");
  }

  /** ALPN's h2: the stream runs the same flow, and the origin hears https from the edge. */
  @ParameterizedTest
  @ValueSource(strings = {"openssl", "jdk"})
  void curlSpeaksHttp2OverTlsByAlpn(String provider) throws Exception {
    Tools.require("curl");
    start(provider);
    Tools.Run r =
        Tools.run(
            List.of(
                "curl",
                "-sS",
                "--http2",
                "--cacert",
                caFile.toString(),
                "--resolve",
                "a.test:" + tlsPort + ":127.0.0.1",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code} %{http_version}",
                "https://a.test:" + tlsPort + "/h2"));
    assertThat(r.output()).isEqualTo("200 2");
    assertThat(header(origin.seenHeaders.get(0), "X-Forwarded-Proto")).isEqualTo("https");
    assertThat(header(origin.seenHeaders.get(0), "Via")).contains("2 ");
  }

  @ParameterizedTest
  @ValueSource(strings = {"openssl", "jdk"})
  void sniPicksTheCertificateByItsNamesAndAnUnknownNameGetsTheFirst(String provider)
      throws Exception {
    Tools.require("openssl");
    start(provider);
    assertThat(sClient("a.test", "http/1.1"))
        .contains("subject=CN = a.test", "ALPN protocol: http/1.1", "Verify return code: 0 (ok)");
    assertThat(sClient("www.b.test", "http/1.1"))
        .contains("subject=CN = *.b.test", "Verify return code: 0 (ok)");
    // No certificate names it: the default (first) one, which the client's own check refuses.
    assertThat(sClient("nobody.test", "http/1.1")).contains("subject=CN = a.test");
    assertThat(sClient("a.test", "h2")).contains("ALPN protocol: h2");
  }

  @ParameterizedTest
  @ValueSource(strings = {"openssl", "jdk"})
  void sessionsAreResumed(String provider) throws Exception {
    Tools.require("openssl");
    start(provider);
    Path session = dir.resolve("session.pem");
    String first =
        sClient(List.of("-servername", "a.test", "-tls1_2", "-sess_out", session.toString()));
    assertThat(first).contains("New, ");
    String second =
        sClient(List.of("-servername", "a.test", "-tls1_2", "-sess_in", session.toString()));
    assertThat(second).contains("Reused, ");
  }

  @ParameterizedTest
  @ValueSource(strings = {"openssl", "jdk"})
  void aReloadGivesNewHandshakesTheNewCertificateAndLeavesOpenConnectionsAlone(String provider)
      throws Exception {
    start(provider);
    try (SSLSocket kept = connect("a.test")) {
      BigInteger before = serial(kept);
      assertThat(get(kept)).startsWith("HTTP/1.1 200");

      TestCertificates.Issued renewed = ca.issue("a.test");
      renewed.write(dir, "a");
      HttpResponse<String> reload =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/admin/reload"))
                  .header("Authorization", "Bearer t0ken")
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(reload.statusCode()).isEqualTo(200);
      assertThat(reload.body()).contains("certificates reloaded");

      try (SSLSocket fresh = connect("a.test")) {
        assertThat(serial(fresh)).isEqualTo(renewed.certificate().getSerialNumber());
        assertThat(get(fresh)).startsWith("HTTP/1.1 200");
      }
      // The connection opened before the reload is still served, with the certificate it had.
      assertThat(get(kept)).startsWith("HTTP/1.1 200");
      assertThat(serial(kept))
          .isEqualTo(before)
          .isNotEqualTo(renewed.certificate().getSerialNumber());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"openssl"})
  void aResponseCachedForHttpIsNeverServedForHttpsNorTheOtherWayRound(String provider)
      throws Exception {
    start(provider);
    // Both with Host: a.test, so only the scheme tells the two apart.
    try (java.net.Socket plain = new java.net.Socket("127.0.0.1", port)) {
      plain.setSoTimeout(10_000);
      assertThat(get(plain, "/c/page")).startsWith("HTTP/1.1 200");
      assertThat(get(plain, "/c/page")).startsWith("HTTP/1.1 200");
    }
    assertThat(origin.calls.get()).as("the second http request is a hit").isEqualTo(1);
    try (SSLSocket s = connect("a.test")) {
      assertThat(get(s, "/c/page")).startsWith("HTTP/1.1 200");
      assertThat(origin.calls.get()).as("https does not get http's entry").isEqualTo(2);
      assertThat(header(origin.seenHeaders.get(1), "X-Forwarded-Proto")).isEqualTo("https");
      assertThat(get(s, "/c/page")).startsWith("HTTP/1.1 200");
    }
    assertThat(origin.calls.get()).as("the second https request is a hit").isEqualTo(2);
  }

  private String sClient(String serverName, String alpn) throws Exception {
    return sClient(List.of("-servername", serverName, "-alpn", alpn));
  }

  private String sClient(List<String> options) throws Exception {
    List<String> command =
        new java.util.ArrayList<>(
            List.of(
                "openssl",
                "s_client",
                "-connect",
                "127.0.0.1:" + tlsPort,
                "-CAfile",
                caFile.toString()));
    command.addAll(options);
    return Tools.run(command).output();
  }

  private SSLSocket connect(String serverName) throws Exception {
    SSLSocket s =
        (SSLSocket) ca.clientContext().getSocketFactory().createSocket("127.0.0.1", tlsPort);
    SSLParameters p = s.getSSLParameters();
    p.setServerNames(List.of(new SNIHostName(serverName)));
    p.setEndpointIdentificationAlgorithm("HTTPS");
    s.setSSLParameters(p);
    s.setSoTimeout(10_000);
    s.startHandshake();
    return s;
  }

  private static BigInteger serial(SSLSocket s) throws Exception {
    return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
  }

  /** One keep-alive GET on {@code s}: the status line and headers, the body read and dropped. */
  private static String get(SSLSocket s) throws IOException {
    return get(s, "/k");
  }

  private static String get(java.net.Socket s, String path) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(
        ("GET " + path + " HTTP/1.1\r\nHost: a.test\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    out.flush();
    InputStream in = s.getInputStream();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("closed after " + head);
      }
      head.write(b);
    }
    String h = head.toString(StandardCharsets.US_ASCII);
    int length = 0;
    for (String line : h.split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    in.readNBytes(length);
    return h;
  }

  private static String header(Map<String, List<String>> headers, String name) {
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name)) {
        return String.join(",", e.getValue());
      }
    }
    return null;
  }
}
