package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestOrigin;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** HTTP/2 with prior knowledge (h2c) through the proxy with curl, as a client would use it. */
class Http2ProxyTest {
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();
  @TempDir Path dir;

  @BeforeAll
  static void curl() throws Exception {
    Curl.assumeHttp2();
  }

  @Test
  void getGoesThroughTheFlowOverHttp2() throws Exception {
    TestOrigin origin = fx.testOrigin();
    ProxyServer p =
        fx.proxy()
            .routes(route("r", "/", "o"))
            .origins(pool("o", origin.address()).build())
            .start();

    Curl.Response r = Curl.h2c(dir, "http://127.0.0.1:" + p.port() + "/hello?x=1");

    assertThat(r.protocol()).isEqualTo("HTTP/2");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("hello from origin /hello?x=1");
    assertThat(r.header("via")).isEqualTo("2 " + ProxyFixture.NAME);
    assertThat(r.header("x-origin")).isEqualTo("test");
    assertThat(r.header("x-hop")).isNull();
    assertThat(origin.seenHeaders).hasSize(1);
    assertThat(origin.seenHeaders.get(0).get("Via")).containsExactly("2 " + ProxyFixture.NAME);
    assertThat(origin.seenHeaders.get(0).get("Host")).containsExactly("127.0.0.1:" + p.port());
  }
}
