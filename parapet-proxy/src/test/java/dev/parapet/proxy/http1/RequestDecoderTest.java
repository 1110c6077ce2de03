package dev.parapet.proxy.http1;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpExpectationFailedEvent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The client side's request decoder: what Netty's decoder reads from well-formed requests, fields
 * written on as they came, and a refusal for every framing that servers read in different ways.
 */
class RequestDecoderTest {
  private final ArrayDeque<HttpMethod> methods = new ArrayDeque<>();

  private EmbeddedChannel channel() {
    return new EmbeddedChannel(new RequestDecoder(8192, 32 * 1024, 8192, methods));
  }

  /** Everything decoded from {@code raw}, given to the decoder in pieces cut at {@code cuts}. */
  private static List<Object> decode(EmbeddedChannel ch, byte[] raw, int... cuts) {
    int from = 0;
    for (int cut : cuts) {
      ch.writeInbound(Unpooled.wrappedBuffer(raw, from, cut - from));
      from = cut;
    }
    ch.writeInbound(Unpooled.wrappedBuffer(raw, from, raw.length - from));
    List<Object> out = new ArrayList<>();
    Object o;
    while ((o = ch.readInbound()) != null) {
      out.add(o);
    }
    return out;
  }

  private List<Object> decode(String raw) {
    EmbeddedChannel ch = channel();
    List<Object> out = decode(ch, raw.getBytes(StandardCharsets.ISO_8859_1));
    ch.finishAndReleaseAll();
    return out;
  }

  /** One line per message: the head's parts and fields, each content's bytes, the end. */
  private static List<String> describe(List<Object> msgs) {
    List<String> d = new ArrayList<>();
    for (Object o : msgs) {
      if (o instanceof HttpRequest r) {
        StringBuilder s = new StringBuilder();
        s.append(r.decoderResult().isSuccess() ? "" : "FAILED ");
        s.append(r.method()).append(' ').append(r.uri()).append(' ').append(r.protocolVersion());
        for (Map.Entry<String, String> e : r.headers()) {
          s.append(" [").append(e.getKey()).append('=').append(e.getValue()).append(']');
        }
        d.add(s.toString());
        if (o instanceof LastHttpContent && r.decoderResult().isSuccess()) {
          d.add("end"); // a request without a body comes whole
        }
      }
      if (o instanceof HttpContent c && !(o instanceof HttpRequest)) { // a failed head is full
        String body = c.content().toString(StandardCharsets.ISO_8859_1);
        if (!body.isEmpty()) {
          d.add("body " + body);
        }
        if (o instanceof LastHttpContent last) {
          StringBuilder s = new StringBuilder(last.decoderResult().isSuccess() ? "end" : "FAILED");
          for (Map.Entry<String, String> e : last.trailingHeaders()) {
            s.append(" [").append(e.getKey()).append('=').append(e.getValue()).append(']');
          }
          d.add(s.toString());
        }
      }
      ReferenceCountUtil.release(o);
    }
    // Bodies come in pieces that depend on how the bytes arrived: join neighbouring ones.
    List<String> joined = new ArrayList<>();
    for (String s : d) {
      int last = joined.size() - 1;
      if (s.startsWith("body ") && last >= 0 && joined.get(last).startsWith("body ")) {
        joined.set(last, joined.get(last) + s.substring(5));
      } else {
        joined.add(s);
      }
    }
    return joined;
  }

  @Test
  void aRequestIsReadAsNettyReadsItAndItsFieldsAreWrittenOnAsTheyCame() {
    String head =
        "GET /a?b=c HTTP/1.1\r\nHost: example.org\r\nuser-agent: wrk\r\nX-Odd:  spaced \t\r\n\r\n";
    List<Object> out = decode(head);
    HttpRequest r = (HttpRequest) out.get(0);
    assertThat(r.method()).isSameAs(HttpMethod.GET);
    assertThat(r.protocolVersion()).isSameAs(HttpVersion.HTTP_1_1);
    assertThat(r.uri()).isEqualTo("/a?b=c");
    assertThat(r.headers().get("x-odd")).isEqualTo("spaced");
    ByteBuf written = Unpooled.buffer();
    ((HeaderList) r.headers()).encodeTo(written);
    assertThat(written.toString(StandardCharsets.ISO_8859_1))
        .isEqualTo("Host: example.org\r\nuser-agent: wrk\r\nX-Odd:  spaced \t\r\n");
    written.release();
    assertThat(r).isInstanceOf(FullHttpRequest.class); // no body: one message
    assertThat(((FullHttpRequest) r).content().isReadable()).isFalse();
    assertThat(out).hasSize(1);
    assertThat(methods).containsExactly(HttpMethod.GET);
  }

  @Test
  void pipelinedRequestsWithBodiesInAnyPiecesDecodeLikeNettys() {
    // Property test as a seeded random sequence: random well-formed requests, one after another on
    // a connection, cut into random pieces, read by this decoder and by Netty's.
    String[] methodNames = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "PURGE"};
    String[] names = {"Host", "host", "Accept", "X-Trace", "Cookie", "Content-Type", "x-a"};
    for (long seed = 1; seed <= 300; seed++) {
      Random rnd = new Random(seed);
      StringBuilder raw = new StringBuilder();
      int requests = 1 + rnd.nextInt(3);
      for (int q = 0; q < requests; q++) {
        String method = methodNames[rnd.nextInt(methodNames.length)];
        raw.append(method).append(" /p").append(rnd.nextInt(1000));
        if (rnd.nextBoolean()) {
          raw.append("?q=").append(Long.toString(rnd.nextLong() & 0xFFFFFF, 36)).append("%20é");
        }
        boolean http10 = rnd.nextInt(4) == 0;
        raw.append(http10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
        int fields = rnd.nextInt(6);
        for (int i = 0; i < fields; i++) {
          raw.append(names[rnd.nextInt(names.length)])
              .append(":")
              .append(rnd.nextBoolean() ? " " : "")
              .append("v")
              .append(rnd.nextInt(100))
              .append(rnd.nextBoolean() ? ", w\t" : "")
              .append("\r\n");
        }
        int bodyKind = rnd.nextInt(http10 ? 2 : 3); // chunked is refused in HTTP/1.0
        String body = "b".repeat(rnd.nextInt(40)) + seed;
        switch (bodyKind) {
          case 1 ->
              raw.append("Content-Length: ").append(body.length()).append("\r\n\r\n").append(body);
          case 2 -> {
            raw.append("Transfer-Encoding: chunked\r\n\r\n");
            int at = 0;
            while (at < body.length()) {
              int n = Math.min(body.length() - at, 1 + rnd.nextInt(20));
              raw.append(Integer.toHexString(n)).append(rnd.nextBoolean() ? ";ext=1" : "");
              raw.append("\r\n").append(body, at, at + n).append("\r\n");
              at += n;
            }
            raw.append("0\r\n");
            if (rnd.nextBoolean()) {
              raw.append("X-Trailer: t").append(seed).append("\r\n");
            }
            raw.append("\r\n");
          }
          default -> raw.append("\r\n");
        }
      }
      byte[] bytes = raw.toString().getBytes(StandardCharsets.ISO_8859_1);
      // Distinct cut points: a socket never delivers an empty read. (Netty's decoder, given an
      // empty buffer between two pipelined requests, once returned the first with the second's
      // method, which is not what this test is about.)
      int[] cuts = rnd.ints(rnd.nextInt(4), 1, bytes.length).distinct().sorted().toArray();
      EmbeddedChannel mine = channel();
      EmbeddedChannel netty = new EmbeddedChannel(new HttpRequestDecoder());
      List<String> got = describe(decode(mine, bytes, cuts));
      List<String> expected = describe(decode(netty, bytes, cuts));
      assertThat(got)
          .as("seed %d, cuts %s: %s", seed, java.util.Arrays.toString(cuts), raw)
          .isEqualTo(expected);
      assertThat(got.get(0)).doesNotStartWith("FAILED");
      mine.finishAndReleaseAll();
      netty.finishAndReleaseAll();
    }
  }

  @Test
  void everyFramingServersReadDifferentlyIsRefusedAndNothingFollows() {
    List<String> hostile =
        List.of(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\nhello",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x5\r\n\r\nhello",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\nhello",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nhello",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n",
            "GET / HTTP/1.1\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n\n",
            "GET / HTTP/1.1\r\nHost: x\r\nX-A: b\r\n  folded\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nX-A: b\0c\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n: no name\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n",
            "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /a\tb HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET  / HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1 \r\nHost: x\r\n\r\n",
            "GET / HTTP/2.0\r\nHost: x\r\n\r\n",
            "GET / http/1.1\r\nHost: x\r\n\r\n",
            "GET /\r\n\r\n",
            "G(T / HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /" + "a".repeat(9_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(40 * 1024) + "\r\n\r\n");
    for (String request : hostile) {
      List<String> d = describe(decode(request));
      assertThat(d).as(request.substring(0, Math.min(70, request.length()))).hasSize(1);
      assertThat(d.get(0)).startsWith("FAILED GET /bad-request HTTP/1.0");
    }
  }

  @Test
  void aBodyThatLosesItsFramingEndsInAFailureAndNothingFollows() {
    // A chunk size that is not a number, and bare line feeds where chunked coding has CRLF (after
    // the size, after the data, ending the trailers): the body so far, then a failure.
    for (String body :
        List.of(
            "5\r\nhello\r\nZZ\r\n0\r\n\r\n",
            "5\r\nhello\r\n0\n\r\n",
            "5\r\nhello\n0\r\n\r\n",
            "5\r\nhello\r\n0\r\n\n")) {
      List<String> d =
          describe(
              decode(
                  "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                      + body
                      + "GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
      assertThat(d)
          .as(body)
          .containsExactly(
              "POST / HTTP/1.1 [Host=x] [Transfer-Encoding=chunked]", "body hello", "FAILED");
    }
  }

  @Test
  void afterARefusedExpectationTheNextRequestIsRead() {
    EmbeddedChannel ch = channel();
    List<Object> first =
        decode(
            ch,
            "PUT /u HTTP/1.1\r\nHost: x\r\nExpect: nonsense\r\nContent-Length: 10\r\n\r\n"
                .getBytes(StandardCharsets.ISO_8859_1));
    assertThat(describe(first)).hasSize(1);
    ch.pipeline().fireUserEventTriggered(HttpExpectationFailedEvent.INSTANCE);
    List<String> next =
        describe(
            decode(ch, "GET /n HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1)));
    assertThat(next).containsExactly("GET /n HTTP/1.1 [Host=x]", "end");
    ch.finishAndReleaseAll();
  }

  @Test
  void recycledFieldsTakeTheNextHeadAndFieldsStillOutAreLeftAlone() {
    EmbeddedChannel ch = channel();
    byte[] ab =
        ("GET /a HTTP/1.1\r\nHost: a.example\r\nX-Long: "
                + "x".repeat(300)
                + "\r\n\r\n"
                + "GET /b HTTP/1.1\r\nHost: b\r\nX-B: 2\r\n\r\n")
            .getBytes(StandardCharsets.ISO_8859_1);
    List<Object> pipelined = decode(ch, ab);
    HttpRequest a = (HttpRequest) pipelined.get(0);
    HttpRequest b = (HttpRequest) pipelined.get(1); // each whole: no body
    assertThat(b.headers()).isNotSameAs(a.headers()); // b was read while a's fields were out

    ((HeaderList) a.headers()).recycle(); // a is over; b waits (as a pipelined request does)
    List<Object> c =
        decode(ch, "GET /c HTTP/1.1\r\nHost: c\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
    assertThat(((HttpRequest) c.get(0)).headers()).isSameAs(a.headers());
    assertThat(describe(c)).containsExactly("GET /c HTTP/1.1 [Host=c]", "end");
    assertThat(describe(List.of(b))).containsExactly("GET /b HTTP/1.1 [Host=b] [X-B=2]", "end");

    ((HeaderList) b.headers()).recycle(); // one set is kept: c's is still out, b's is taken
    ((HeaderList) ((HttpRequest) c.get(0)).headers()).recycle(); // ... and c's dropped
    String longer = "GET /d HTTP/1.1\r\nHost: d\r\nX-D: " + "d".repeat(500) + "\r\n\r\n";
    List<Object> d = decode(ch, longer.getBytes(StandardCharsets.ISO_8859_1));
    HttpRequest dr = (HttpRequest) d.get(0);
    assertThat(dr.headers()).isSameAs(b.headers());
    assertThat(dr.headers().get("X-D")).isEqualTo("d".repeat(500)); // the head grew
    ByteBuf out = Unpooled.buffer();
    ((HeaderList) dr.headers()).encodeTo(out);
    assertThat(out.toString(StandardCharsets.ISO_8859_1))
        .isEqualTo("Host: d\r\nX-D: " + "d".repeat(500) + "\r\n");
    out.release();
    pipelined.forEach(ReferenceCountUtil::release);
    ch.finishAndReleaseAll();
  }

  @Test
  void aConnectionsRepeatedTargetAndHostAreTheStringsItReadLast() {
    EmbeddedChannel ch = channel();
    byte[] same =
        "GET /same HTTP/1.1\r\nHost: h.example\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);
    HttpRequest first = (HttpRequest) decode(ch, same).get(0);
    String host = first.headers().get("Host");
    ((HeaderList) first.headers()).recycle();
    HttpRequest second = (HttpRequest) decode(ch, same).get(0);
    assertThat(second.headers()).isSameAs(first.headers());
    assertThat(second.uri()).isSameAs(first.uri());
    assertThat(second.headers().get("Host")).isSameAs(host);

    ((HeaderList) second.headers()).recycle();
    byte[] other =
        "GET /samf HTTP/1.1\r\nHost: h.examplf\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);
    HttpRequest third = (HttpRequest) decode(ch, other).get(0);
    assertThat(third.uri()).isEqualTo("/samf");
    assertThat(third.headers().get("Host")).isEqualTo("h.examplf");
    ch.finishAndReleaseAll();
  }
}
