package dev.parapet.proxy.server;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.parapet.proxy.testing.PathOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.util.ResourceLeakDetector;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Hostile HTTP/2 clients (Netty's client, writing what a well-behaved one never would): each abuse
 * ends the abusive connection with GOAWAY, counted by reason, while another client on another
 * connection is served as usual.
 */
class Http2AbuseTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  private ProxyServer proxy(PathOrigin origin) throws InterruptedException {
    return fx.proxy()
        .routes(route("r", "/", "o"))
        .origins(pool("o", origin.address()).build())
        .start();
  }

  private static double goAways(ProxyServer p, String reason) {
    Matcher m =
        Pattern.compile(
                "parapet_h2_goaway_total\\{listener=\"edge-test\",reason=\""
                    + reason
                    + "\"} (\\S+)")
            .matcher(p.metrics().scrape());
    return m.find() ? Double.parseDouble(m.group(1)) : -1;
  }

  /** A request on a fresh connection succeeds: the proxy is undisturbed. */
  private static void anotherClientIsServed(ProxyServer p) throws Exception {
    try (H2Client good = new H2Client(p.port())) {
      H2Client.Response r =
          good.request(H2Client.get(p.port(), "/fine"), null).get(30, TimeUnit.SECONDS);
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("o /fine");
    }
  }

  @Test
  void rapidResetGetsGoAwayAndCloseWhileAnotherConnectionKeepsWorking() throws Exception {
    PathOrigin origin = fx.pathOrigin("o");
    origin.hold = true; // every request is still waiting for its response when it is reset
    ProxyServer p = proxy(origin);
    try (H2Client bad = new H2Client(p.port());
        H2Client good = new H2Client(p.port())) {
      int sent = 0;
      try {
        for (; sent < 1000 && bad.channel.isActive(); sent++) {
          Http2StreamChannel s = bad.open(new CompletableFuture<>());
          s.write(new DefaultHttp2HeadersFrame(H2Client.get(p.port(), "/r" + sent), true));
          s.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.CANCEL));
        }
      } catch (Exception closedMeanwhile) {
        // the proxy closed the connection while streams were still being opened
      }
      await().atMost(WAIT).until(() -> bad.closed.isDone());
      // (How many of the 1000 the client wrote before the close is the scheduler's business: on a
      // busy machine all of them may be in its buffers first. The GOAWAY and the close are not.)
      assertThat(goAways(p, "flood")).isEqualTo(1.0);
      assertThat(p.metrics().scrape())
          .containsPattern(
              "parapet_h2_stream_errors_total\\{kind=\"client_reset\",listener=\"edge-test\"} [1-9]");

      origin.releaseHeld();
      CompletableFuture<H2Client.Response> r = good.request(H2Client.get(p.port(), "/fine"), null);
      assertThat(r.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
      // Every reset request was cancelled like a closed HTTP/1.1 connection's: none is in flight.
      await().atMost(WAIT).until(() -> p.metrics().routeInflight() == 0);
    }
  }

  @Test
  void anOversizedHeaderListIsRefusedWith431AndTheConnectionGoesOn() throws Exception {
    PathOrigin origin = fx.pathOrigin("o");
    ProxyServer p = proxy(origin);
    try (H2Client c = new H2Client(p.port())) {
      Http2Headers big = H2Client.get(p.port(), "/big").add("x-big", "a".repeat(34_000));

      H2Client.Response r = c.request(big, null).get(30, TimeUnit.SECONDS);
      H2Client.Response next =
          c.request(H2Client.get(p.port(), "/next"), null).get(30, TimeUnit.SECONDS);

      assertThat(r.status()).isEqualTo(431);
      assertThat(next.status()).isEqualTo(200);
      assertThat(origin.paths).containsExactly("/next");
    }
  }

  @Test
  void aPingFloodGetsGoAway() throws Exception {
    floodOfControlFrames(0x6, 8); // PING: eight bytes of opaque data
  }

  @Test
  void aSettingsFloodGetsGoAway() throws Exception {
    floodOfControlFrames(0x4, 0); // SETTINGS without parameters: still one to acknowledge
  }

  /**
   * The client writes control frames (as raw bytes, in batches) without reading the proxy's
   * acknowledgements: once the socket's buffers are full they queue at the proxy, and past the
   * limit the connection is closed. Hundreds of thousands of frames may be needed before the
   * kernel's buffers are full; leak tracking of every acknowledgement's buffer is turned down
   * meanwhile, or the flood takes minutes on a busy machine.
   */
  private void floodOfControlFrames(int type, int payload) throws Exception {
    PathOrigin origin = fx.pathOrigin("o");
    ProxyServer p = proxy(origin);
    ByteBuf batch = Unpooled.buffer();
    for (int i = 0; i < 10_000; i++) {
      frame(batch, type, 0, 0, new byte[payload]);
    }
    ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
    try (H2Client bad = new H2Client(p.port())) {
      bad.channel.config().setAutoRead(false);
      for (int n = 0; goAways(p, "flood") < 1 && bad.channel.isActive() && n < 2_000; n++) {
        ChannelFuture written =
            bad.channel.pipeline().firstContext().writeAndFlush(batch.retainedDuplicate());
        await()
            .atMost(WAIT)
            .until(() -> written.isDone() || goAways(p, "flood") >= 1 || !bad.channel.isActive());
      }
      await().atMost(WAIT).until(() -> goAways(p, "flood") >= 1);
      bad.channel.config().setAutoRead(true); // reads what is left: the proxy closed
      await().atMost(WAIT).until(() -> bad.closed.isDone());
      assertThat(goAways(p, "flood")).isEqualTo(1.0);
    } finally {
      batch.release();
      ResourceLeakDetector.setLevel(level);
    }
    anotherClientIsServed(p);
  }

  @Test
  void aFloodOfSmallContinuationFramesGetsGoAway() throws Exception {
    PathOrigin origin = fx.pathOrigin("o");
    ProxyServer p = proxy(origin);
    try (H2Client bad = new H2Client(p.port())) {
      ByteBuf raw = Unpooled.buffer();
      frame(raw, 0x1, 0, 1, new byte[] {(byte) 0x82}); // HEADERS without END_HEADERS
      for (int i = 0; i < 100; i++) {
        frame(raw, 0x9, 0, 1, new byte[] {(byte) 0x82}); // CONTINUATION, one byte each
      }
      bad.channel.pipeline().firstContext().writeAndFlush(raw);

      await().atMost(WAIT).until(() -> bad.closed.isDone());
      assertThat(goAways(p, "flood")).isEqualTo(1.0);
      assertThat(origin.requests.get()).isZero();
      anotherClientIsServed(p);
    }
  }

  @Test
  void aHeaderBlockLeftIncompleteGetsGoAwayAfterTheHeaderTimeout() throws Exception {
    PathOrigin origin = fx.pathOrigin("o");
    ProxyServer p =
        fx.proxy()
            .settings(s -> s.withHeaderTimeout(Duration.ofMillis(300)))
            .routes(route("r", "/", "o"))
            .origins(pool("o", origin.address()).build())
            .start();
    try (H2Client bad = new H2Client(p.port())) {
      // One whole request first: the client's SETTINGS acknowledgement is out, so nothing its codec
      // sends on its own can land inside the header block below (that would be a PROTOCOL_ERROR).
      assertThat(
              bad.request(H2Client.get(p.port(), "/first"), null)
                  .get(30, TimeUnit.SECONDS)
                  .status())
          .isEqualTo(200);
      ByteBuf raw = Unpooled.buffer();
      frame(raw, 0x1, 0, 3, new byte[] {(byte) 0x82}); // HEADERS without END_HEADERS, then nothing
      bad.channel.pipeline().firstContext().writeAndFlush(raw);

      await().atMost(WAIT).until(() -> bad.closed.isDone());
      assertThat(bad.goAways)
          .extracting(Http2GoAwayFrame::errorCode)
          .containsExactly(Http2Error.NO_ERROR.code());
      assertThat(goAways(p, "header_timeout")).isEqualTo(1.0);
      assertThat(origin.paths).containsExactly("/first");
      assertThat(p.metrics().scrape())
          .contains("parapet_local_rejections_total{reason=\"header_timeout\"} 1.0");
      anotherClientIsServed(p);
    }
  }

  @Test
  void aRequestWhoseBodyNeverComesIsEndedByTheOriginTimeout() throws Exception {
    PathOrigin origin = fx.pathOrigin("o"); // reads the whole body before it answers
    ProxyServer p =
        fx.proxy()
            .settings(s -> s.withHeaderTimeout(Duration.ofMillis(300)))
            .routes(route("r", "/", "o"))
            .origins(pool("o", origin.address()).timeout(Duration.ofMillis(500)).build())
            .start();
    try (H2Client c = new H2Client(p.port())) {
      CompletableFuture<H2Client.Response> done = new CompletableFuture<>();
      Http2StreamChannel s = c.open(done);
      Http2Headers post = H2Client.get(p.port(), "/upload").method("POST");
      s.writeAndFlush(new DefaultHttp2HeadersFrame(post, false)); // no END_STREAM, no DATA ever

      H2Client.Response r = done.get(30, TimeUnit.SECONDS);
      assertThat(r.status()).isEqualTo(504);
      H2Client.Response next =
          c.request(H2Client.get(p.port(), "/next"), null).get(30, TimeUnit.SECONDS);
      assertThat(next.status()).isEqualTo(200);
    }
  }

  @Test
  void aMalformedFrameIsAConnectionErrorWithGoAway() throws Exception {
    PathOrigin origin = fx.pathOrigin("o");
    ProxyServer p = proxy(origin);
    try (H2Client bad = new H2Client(p.port())) {
      ByteBuf raw = Unpooled.buffer();
      frame(raw, 0x6, 0, 0, new byte[7]); // PING of 7 bytes: RFC 9113 §6.7 says 8
      bad.channel.pipeline().firstContext().writeAndFlush(raw);

      await().atMost(WAIT).until(() -> bad.closed.isDone());
      assertThat(bad.goAways)
          .extracting(Http2GoAwayFrame::errorCode)
          .containsExactly(Http2Error.FRAME_SIZE_ERROR.code());
      assertThat(goAways(p, "protocol_error")).isEqualTo(1.0);
      anotherClientIsServed(p);
    }
  }

  @Test
  void aRequestWithoutPathIsResetAndTheConnectionGoesOn() throws Exception {
    PathOrigin origin = fx.pathOrigin("o");
    ProxyServer p = proxy(origin);
    try (H2Client c = new H2Client(p.port())) {
      Http2Headers noPath = H2Client.get(p.port(), "/x");
      noPath.remove(":path");

      H2Client.Response r = c.request(noPath, null).get(30, TimeUnit.SECONDS);
      H2Client.Response next =
          c.request(H2Client.get(p.port(), "/next"), null).get(30, TimeUnit.SECONDS);

      assertThat(r.resetCode()).isEqualTo(Http2Error.PROTOCOL_ERROR.code());
      assertThat(next.status()).isEqualTo(200);
      assertThat(origin.paths).containsExactly("/next");
    }
  }

  /** Appends one frame: RFC 9113 §4.1's nine-byte header, then {@code payload}. */
  private static void frame(ByteBuf out, int type, int flags, int stream, byte[] payload) {
    out.writeMedium(payload.length).writeByte(type).writeByte(flags).writeInt(stream);
    out.writeBytes(payload);
  }
}
