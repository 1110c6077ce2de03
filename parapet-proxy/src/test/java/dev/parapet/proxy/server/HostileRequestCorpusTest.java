package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.raw;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.RawOrigin;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hostile requests as raw bytes, what the client is answered, and exactly what the origin saw:
 * nothing, or one well-framed request. Request smuggling (every way of making two parsers disagree
 * on where a request ends), oversized and malformed heads, invalid authorities, hop-by-hop and
 * internal signals an untrusted client must not pass on. Each case is one connection to a proxy
 * that trusts nobody, in front of an origin that records every byte it reads.
 */
class HostileRequestCorpusTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private RawOrigin origin;
  private int port;

  @BeforeEach
  void start() throws Exception {
    origin = fx.closeLater(RawOrigin.answering("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
    port =
        fx.proxy()
            .routes(route("all", "/", "o"))
            .origins(pool("o", origin.address()).timeout(Duration.ofSeconds(5)).build())
            .start()
            .port();
  }

  /** What the origin read: its request heads and bodies, in order. */
  record Seen(List<String> heads, List<String> bodies) {
    String head() {
      assertThat(heads).as("requests the origin read").hasSize(1);
      return heads.get(0);
    }

    String body() {
      assertThat(bodies).hasSize(1);
      return bodies.get(0);
    }
  }

  /** A request: {@code GET /p}, {@code Host: x}, {@code fields} (each ending in CRLF), close. */
  private static String get(String fields) {
    return "GET /p HTTP/1.1\r\nHost: x\r\n" + fields + "Connection: close\r\n\r\n";
  }

  /** A POST with {@code fields} and then {@code body} as given. */
  private static String post(String fields, String body) {
    return "POST /p HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + fields + "\r\n" + body;
  }

  private static Arguments refused(String name, int status, String request) {
    return Arguments.of(name, request, status, (Consumer<Seen>) s -> assertThat(s.heads).isEmpty());
  }

  private static Arguments forwarded(String name, String request, Consumer<Seen> check) {
    return Arguments.of(name, request, 200, check);
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        // --- framing: Content-Length and Transfer-Encoding ---
        refused(
            "CL and TE",
            400,
            post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n")),
        refused(
            "TE and CL",
            400,
            post("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n")),
        refused(
            "two Content-Length equal",
            400,
            post("Content-Length: 5\r\nContent-Length: 5\r\n", "hello")),
        refused(
            "two Content-Length differing",
            400,
            post("Content-Length: 5\r\nContent-Length: 6\r\n", "hello!")),
        refused("Content-Length list", 400, post("Content-Length: 5, 5\r\n", "hello")),
        refused("Content-Length signed", 400, post("Content-Length: +5\r\n", "hello")),
        refused("Content-Length negative", 400, post("Content-Length: -1\r\n", "")),
        refused("Content-Length hex", 400, post("Content-Length: 0x5\r\n", "hello")),
        refused(
            "Content-Length with a space inside", 400, post("Content-Length: 5 5\r\n", "hello")),
        refused(
            "Content-Length overflowing",
            400,
            post("Content-Length: 99999999999999999999999\r\n", "")),
        refused("Content-Length empty", 400, post("Content-Length: \r\n", "")),
        refused("TE xchunked", 400, post("Transfer-Encoding: xchunked\r\n", "0\r\n\r\n")),
        refused(
            "TE chunked, chunked",
            400,
            post("Transfer-Encoding: chunked, chunked\r\n", "0\r\n\r\n")),
        refused("TE gzip, chunked", 400, post("Transfer-Encoding: gzip, chunked\r\n", "0\r\n\r\n")),
        refused("TE chunked, gzip", 400, post("Transfer-Encoding: chunked, gzip\r\n", "0\r\n\r\n")),
        refused("TE identity", 400, post("Transfer-Encoding: identity\r\n", "")),
        refused(
            "TE twice",
            400,
            post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n")),
        refused(
            "TE with a space before the colon",
            400,
            post("Transfer-Encoding : chunked\r\n", "0\r\n\r\n")),
        refused(
            "TE with a tab before the colon",
            400,
            post("Transfer-Encoding\t: chunked\r\n", "0\r\n\r\n")),
        refused(
            "TE folded onto the next line",
            400,
            post("Transfer-Encoding:\r\n chunked\r\n", "0\r\n\r\n")),
        refused(
            "TE in HTTP/1.0",
            400,
            "POST /p HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        refused(
            "chunk size not hex",
            400,
            post("Transfer-Encoding: chunked\r\n", "zz\r\nhello\r\n0\r\n\r\n")),
        refused(
            "chunk size overflowing",
            400,
            post("Transfer-Encoding: chunked\r\n", "fffffffffffffffff\r\nhello\r\n0\r\n\r\n")),
        refused(
            "chunk size negative",
            400,
            post("Transfer-Encoding: chunked\r\n", "-5\r\nhello\r\n0\r\n\r\n")),
        refused(
            "chunk longer than its size",
            400,
            post("Transfer-Encoding: chunked\r\n", "3\r\nhello\r\n0\r\n\r\n")),
        refused(
            "chunk size ended by a bare LF",
            400,
            post("Transfer-Encoding: chunked\r\n", "5\nhello\r\n0\r\n\r\n")),
        forwarded(
            "a body hiding a second request is one body",
            post("Content-Length: 39\r\n", "GET /admin HTTP/1.1\r\nHost: internal\r\n\r\n"),
            s -> {
              assertThat(s.head())
                  .startsWith("POST /p HTTP/1.1\r\n")
                  .contains("content-length: 39\r\n");
              assertThat(s.body()).isEqualTo("GET /admin HTTP/1.1\r\nHost: internal\r\n\r\n");
            }),
        forwarded(
            "a chunked body with an extension and a trailer is one chunked body",
            post("Transfer-Encoding: chunked\r\n", "5;ext=1\r\nhello\r\n0\r\nX-T: 1\r\n\r\n"),
            s -> {
              assertThat(s.head())
                  .contains("transfer-encoding: chunked\r\n")
                  .doesNotContain("content-length");
              assertThat(s.body()).isEqualTo("5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n"); // re-framed
            }),
        // --- line syntax ---
        refused("request line ended by a bare LF", 400, "GET /p HTTP/1.1\nHost: x\r\n\r\n"),
        refused("header ended by a bare LF", 400, "GET /p HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n"),
        refused("head ended by bare LFs", 400, "GET /p HTTP/1.1\nHost: x\n\n"),
        refused("a bare CR in a header value", 400, get("X-A: a\rb\r\n")),
        refused("a NUL in a header value", 400, get("X-A: a\0b\r\n")),
        refused("obsolete line folding", 400, get("X-A: a\r\n b\r\n")),
        refused("whitespace before a colon", 400, get("X-A : a\r\n")),
        refused("a header name with a separator", 400, get("X(A): a\r\n")),
        refused("an empty header name", 400, get(": a\r\n")),
        refused("a header line without a colon", 400, get("X-A a\r\n")),
        refused("two spaces in the request line", 400, "GET  /p HTTP/1.1\r\nHost: x\r\n\r\n"),
        refused("a space in the target", 400, "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"),
        refused(
            "a control character in the target", 400, "GET /a\u0001b HTTP/1.1\r\nHost: x\r\n\r\n"),
        refused("HTTP/1.2", 400, "GET /p HTTP/1.2\r\nHost: x\r\n\r\n"),
        refused("HTTP/2.0 over HTTP/1", 400, "GET /p HTTP/2.0\r\nHost: x\r\n\r\n"),
        refused("a lower-case version", 400, "GET /p http/1.1\r\nHost: x\r\n\r\n"),
        refused("a method that is not a token", 400, "G(T /p HTTP/1.1\r\nHost: x\r\n\r\n"),
        refused(
            "CONNECT",
            400,
            "CONNECT victim.example:443 HTTP/1.1\r\nHost: victim.example:443\r\n\r\n"),
        // --- sizes ---
        refused(
            "a request line over 8 KiB",
            400,
            "GET /" + "a".repeat(9 * 1024) + " HTTP/1.1\r\nHost: x\r\n\r\n"),
        refused("a head over 32 KiB", 400, get(("X-Big: " + "b".repeat(1000) + "\r\n").repeat(40))),
        refused("more than 100 fields", 400, get("X-F: 1\r\n".repeat(101))),
        refused("a declared body over the limit", 413, post("Content-Length: 100000000\r\n", "")),
        // --- authority ---
        refused("no Host", 400, "GET /p HTTP/1.1\r\nConnection: close\r\n\r\n"),
        refused("two Host fields", 400, "GET /p HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"),
        refused("a Host with a space", 400, "GET /p HTTP/1.1\r\nHost: x y\r\n\r\n"),
        refused("a Host with a slash", 400, "GET /p HTTP/1.1\r\nHost: x/evil\r\n\r\n"),
        refused("a Host with userinfo", 400, "GET /p HTTP/1.1\r\nHost: x@evil\r\n\r\n"),
        refused("an empty Host", 400, "GET /p HTTP/1.1\r\nHost: \r\n\r\n"),
        refused("a target with a fragment", 400, "GET /p#frag HTTP/1.1\r\nHost: x\r\n\r\n"),
        refused(
            "an absolute-form target with userinfo",
            400,
            "GET http://u@victim/p HTTP/1.1\r\nHost: x\r\n\r\n"),
        refused(
            "an absolute-form target of another scheme",
            400,
            "GET ftp://victim/p HTTP/1.1\r\nHost: x\r\n\r\n"),
        refused("an asterisk-form target", 400, "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"),
        forwarded(
            "an absolute-form target's authority replaces Host",
            "GET http://victim.example/p?q HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n",
            s ->
                assertThat(s.head())
                    .startsWith("GET /p?q HTTP/1.1\r\n")
                    .contains("host: victim.example\r\n")
                    .doesNotContain("attacker")),
        refused("a request that loops", 508, get("Via: 1.1 " + ProxyFixture.NAME + "\r\n")),
        // --- hop-by-hop fields and internal signals ---
        forwarded(
            "hop-by-hop fields and what Connection names are removed",
            "GET /p HTTP/1.1\r\nHost: x\r\nConnection: close, X-Secret, Host, Content-Length\r\n"
                + "X-Secret: s\r\nKeep-Alive: 5\r\nProxy-Connection: keep-alive\r\nTE: trailers\r\n"
                + "Upgrade: h2c\r\nProxy-Authorization: Basic cw==\r\nTrailer: X-T\r\n\r\n",
            s ->
                assertThat(s.head().toLowerCase(java.util.Locale.ROOT))
                    .contains("host: x\r\n")
                    .doesNotContain(
                        "x-secret",
                        "keep-alive",
                        "proxy-connection",
                        "te:",
                        "upgrade",
                        "proxy-authorization",
                        "trailer")),
        forwarded(
            "an untrusted client's priority, deadline and forwarding headers are removed",
            get(
                "Priority: u=0\r\nParapet-Deadline: 1\r\nForwarded: for=6.6.6.6\r\n"
                    + "X-Forwarded-Host: evil\r\nX-Real-IP: 6.6.6.6\r\nX-Request-Id: mine\r\n"),
            s ->
                assertThat(s.head().toLowerCase(java.util.Locale.ROOT))
                    .doesNotContain(
                        "priority",
                        "forwarded: ",
                        "x-forwarded-host",
                        "x-real-ip",
                        "x-request-id: mine",
                        "6.6.6.6")
                    // the client's id is replaced by one the proxy generated
                    .containsPattern("x-request-id: [0-9a-f]{16}\r\n")),
        forwarded(
            "an untrusted client's X-Forwarded-For is replaced by its address",
            get("X-Forwarded-For: 6.6.6.6\r\n"),
            s ->
                assertThat(s.head())
                    .contains("x-forwarded-for: 127.0.0.1\r\n")
                    .doesNotContain("6.6.6.6")),
        forwarded(
            "URL rewrite headers an origin framework would obey are removed",
            get("X-Original-URL: /admin\r\nX-Rewrite-URL: /admin\r\n"),
            s -> assertThat(s.head().toLowerCase(java.util.Locale.ROOT)).doesNotContain("/admin")),
        forwarded(
            "a target's bytes outside ASCII go on as they came",
            "GET /caf\u00e9?q=\u00ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            s -> assertThat(s.head()).startsWith("GET /caf\u00e9?q=\u00ff HTTP/1.1\r\n")),
        forwarded(
            "an HTTP/1.0 request is forwarded as HTTP/1.1 with its Host",
            "GET /p HTTP/1.0\r\nHost: x\r\n\r\n",
            s -> assertThat(s.head()).startsWith("GET /p HTTP/1.1\r\n").contains("host: x\r\n")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void answeredAndForwardedAsExpected(
      String name, String request, int status, Consumer<Seen> originSaw) throws Exception {
    String answer = raw(port, request);

    assertThat(answer).as(name).startsWith("HTTP/1.1 " + status + " ");
    originSaw.accept(new Seen(lowerCaseNames(origin.requests()), origin.bodies()));
  }

  /**
   * The heads with field names in lower case, so checks need not know how the proxy spells them.
   */
  private static List<String> lowerCaseNames(List<String> heads) {
    return heads.stream()
        .map(h -> {
          StringBuilder b = new StringBuilder();
          String[] lines = h.split("\r\n", -1);
          b.append(lines[0]);
          for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            b.append("\r\n")
                .append(
                    colon < 0
                        ? lines[i]
                        : lines[i].substring(0, colon).toLowerCase(java.util.Locale.ROOT)
                            + lines[i].substring(colon));
          }
          return b.toString();
        })
        .toList();
  }
}
