package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.raw;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.proxy.testing.CacheOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a client may and may not make the proxy believe: the authority a request is routed, cached
 * and forwarded under is one and the same; an invalid Host or a fragment is refused; the internal
 * signals of a peer that is not a trusted tier (priority, deadline, forwarding headers, request id)
 * never reach anything that acts on them.
 */
class TrustBoundaryTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  /** A proxy with one caching route on {@code /} in front of {@code o}. */
  private ProxyFixture.ProxySpec caching(CacheOrigin o) {
    return fx.proxy()
        .routes(route("r", "/", "o"))
        .origins(
            pool("o", o.address())
                .timeout(Duration.ofSeconds(5))
                .breaker(BreakerPolicy.builder().minRequests(1000).build())
                .build())
        .cache(ProxyFixture.edgeCache("r"));
  }

  private static String get(String target, String host) {
    return "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  }

  @Test
  void anAbsoluteFormTargetsAuthorityIsTheHostForRouteCacheAndOrigin() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    o.headers("Cache-Control", "max-age=60");
    int port = caching(o).start().port();

    String first = raw(port, get("http://victim.example/page1", "attacker.example"));

    assertThat(first).startsWith("HTTP/1.1 200");
    assertThat(o.last().header("Host")).isEqualTo("victim.example");
    // The attacker's own host has no entry: its request goes to the origin.
    assertThat(raw(port, get("/page1", "attacker.example"))).startsWith("HTTP/1.1 200");
    assertThat(o.count()).isEqualTo(2);
    assertThat(o.last().header("Host")).isEqualTo("attacker.example");
    // The victim's entry is what the origin answered for the victim's host.
    assertThat(raw(port, get("/page1", "victim.example")))
        .startsWith("HTTP/1.1 200")
        .contains("Cache-Status: " + ProxyFixture.NAME + "; hit");
    assertThat(o.count()).isEqualTo(2);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "x y",
        "x/evil",
        "x@evil",
        "",
        "x\\\\evil",
        "x?y",
        "x#y",
        "[::1",
        "[]",
        "[::1]x",
        "a:b",
        "a:99999",
        "a:123456",
        ":80",
        "x%zz",
        "\"x\""
      })
  void anInvalidHostIs400AndNeverForwarded(String host) throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    int port = caching(o).start().port();

    assertThat(raw(port, get("/p", host))).startsWith("HTTP/1.1 400");
    assertThat(o.count()).isZero();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "example.com",
        "EXAMPLE.com.",
        "example.com:8080",
        "example.com:",
        "127.0.0.1",
        "[::1]:8080",
        "xn--bcher-kva.example",
        "a_b.example",
        "a%41.example"
      })
  void aValidHostIsForwarded(String host) throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    int port = caching(o).start().port();

    assertThat(raw(port, get("/p", host))).startsWith("HTTP/1.1 200");
    assertThat(o.last().header("Host")).isEqualTo(host);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "/p#fragment",
        "/p?q=1#",
        "http://victim.example/p#x",
        "http://user@victim.example/p",
        "http://user:pw@victim.example/p",
        "ftp://victim.example/p",
        "http:///p",
        "http://x y/p",
        "http://victim.example:99999/p",
        "victim.example/p",
        "*"
      })
  void aTargetThatIsNotOriginOrHttpAbsoluteFormIs400AndNeverForwarded(String target)
      throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    int port = caching(o).start().port();

    assertThat(raw(port, get(target, "victim.example"))).startsWith("HTTP/1.1 400");
    assertThat(o.count()).isZero();
  }

  @Test
  void anHttpsAbsoluteFormTargetIsRoutedByItsAuthorityToo() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    int port = caching(o).start().port();

    assertThat(raw(port, get("HTTPS://Victim.example:8443/p?q=1", "attacker.example")))
        .startsWith("HTTP/1.1 200");
    assertThat(o.last().header("Host")).isEqualTo("Victim.example:8443");
    assertThat(o.last().path()).isEqualTo("/p?q=1");
  }

  private static final String SIGNALS =
      "Priority: u=0\r\n"
          + "X-Forwarded-For: 6.6.6.6\r\n"
          + "x-forwarded-host: evil.example\r\n"
          + "X-Forwarded-Proto: https\r\n"
          + "X-Forwarded-Port: 443\r\n"
          + "Forwarded: for=6.6.6.6;host=evil.example\r\n"
          + "X-Real-IP: 6.6.6.6\r\n"
          + "True-Client-IP: 6.6.6.6\r\n"
          + "X-Original-URL: /admin\r\n"
          + "X-Rewrite-URL: /admin\r\n"
          + "X-Request-Id: chosen-by-client\r\n"
          + "X-Kept: yes\r\n";

  private static String withSignals(String target) {
    return "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + SIGNALS + "\r\n";
  }

  @Test
  void anUntrustedPeersInternalSignalsAreRemovedOrReplaced() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    int port = caching(o).start().port();

    assertThat(raw(port, withSignals("/p"))).startsWith("HTTP/1.1 200");

    CacheOrigin.Seen seen = o.last();
    assertThat(seen.header("X-Forwarded-For")).isEqualTo("127.0.0.1"); // this hop's peer only
    assertThat(seen.header("X-Forwarded-Proto")).isEqualTo("http"); // as this hop saw it
    for (String removed :
        new String[] {
          "Priority",
          "X-Forwarded-Host",
          "X-Forwarded-Port",
          "Forwarded",
          "X-Real-IP",
          "True-Client-IP",
          "X-Original-URL",
          "X-Rewrite-URL"
        }) {
      assertThat(seen.header(removed)).as(removed).isNull();
    }
    // The client's request id is replaced by the proxy's own.
    assertThat(seen.header("X-Request-Id")).matches("[0-9a-f]{16}");
    assertThat(seen.header("X-Kept")).isEqualTo("yes");
  }

  @Test
  void anUntrustedPeersDeadlineIsIgnored() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    int port = caching(o).start().port();

    String r =
        raw(
            port,
            "GET /p HTTP/1.1\r\nHost: x\r\nConnection: close\r\nParapet-Deadline: 30\r\n\r\n");

    // From a trusted tier, 30 ms would be below min_useful after the reserve: 504 at once.
    assertThat(r).startsWith("HTTP/1.1 200");
    assertThat(Long.parseLong(o.last().header("Parapet-Deadline"))).isGreaterThan(1_000);
  }

  @Test
  void aTrustedTiersSignalsAreBelievedAndPassedOn() throws Exception {
    CacheOrigin o = fx.cacheOrigin();
    int port = caching(o).trustingLoopback().start().port();

    assertThat(raw(port, withSignals("/p"))).startsWith("HTTP/1.1 200");

    CacheOrigin.Seen seen = o.last();
    assertThat(seen.header("X-Forwarded-For")).isEqualTo("6.6.6.6, 127.0.0.1");
    assertThat(seen.header("Priority")).isEqualTo("u=0");
    assertThat(seen.header("X-Forwarded-Host")).isEqualTo("evil.example");
    // the scheme the client used at the edge, not this plain hop's
    assertThat(seen.header("X-Forwarded-Proto")).isEqualTo("https");
    assertThat(seen.header("X-Request-Id")).isEqualTo("chosen-by-client");
    assertThat(
            raw(
                port,
                "GET /q HTTP/1.1\r\nHost: x\r\nConnection: close\r\nParapet-Deadline: 30\r\n\r\n"))
        .startsWith("HTTP/1.1 504");
  }
}
