package dev.parapet.proxy.faultorigin;

import dev.parapet.core.time.RandomSource;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpChunkedInput;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Answers one connection's requests as the current {@link FaultPlan} says.
 *
 * <p>Requests are served one at a time, in order: once a request has been read whole, reading stops
 * until its answer has been written, and pipelined requests already decoded from the same read wait
 * in a queue, so a delayed answer is never overtaken by the next one, and a hung request holds its
 * connection the way a stuck server thread would. The plan is read once per request; the outcome
 * and the latency are drawn from the origin's random source; a delay is a timer on this channel's
 * event loop, never a sleep.
 *
 * <pre>
 *  request read ─► plan.behaviourFor(path) ─► pick outcome ─► HANG: stop, never answer
 *                                                  │
 *                                                  ▼ schedule(latency sample)
 *            OK / ERROR / RESET / MID_BODY_RESET / GARBAGE ─► answer ─► read the next request
 * </pre>
 */
final class FaultHandler extends ChannelInboundHandlerAdapter {

  /** A status line that is not one, a header without a colon, and bytes no parser accepts. */
  static final byte[] GARBAGE =
      "HTTP/1.1 2OO NOT-A-STATUS\r\nthis line has no colon\r\n\u0000\u0001\u0002\r\n\r\n"
          .getBytes(StandardCharsets.ISO_8859_1);

  private final FaultOrigin origin;
  private @Nullable Pending pending;
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
  private boolean answering;
  // Whether this connection's request holds one of the origin's workers, and whether its answer's
  // delay is running (the worker is then held even if the client leaves).
  private boolean holdsWorker;
  private boolean delaying;

  /** The parts of a request that the answer needs, kept while its body is drained. */
  private record Pending(
      String path, boolean head, boolean keepAlive, @Nullable String ifNoneMatch) {}

  FaultHandler(FaultOrigin origin) {
    this.origin = origin;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    origin.counters().connection();
    super.channelActive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    try {
      if (msg instanceof HttpRequest request) {
        if (request.decoderResult().isFailure()) {
          origin.counters().request(false);
          origin.counters().outcome(FaultOutcome.BAD_REQUEST);
          ctx.channel().config().setAutoRead(false);
          waiting.clear();
          sendText(ctx, HttpResponseStatus.BAD_REQUEST, "bad request\n", false, false);
          return;
        }
        pending =
            new Pending(
                pathOf(request.uri()),
                HttpMethod.HEAD.equals(request.method()),
                HttpUtil.isKeepAlive(request),
                request.headers().get(HttpHeaderNames.IF_NONE_MATCH));
      }
      if (msg instanceof LastHttpContent && pending != null) {
        Pending request = pending;
        pending = null;
        ctx.channel().config().setAutoRead(false);
        if (answering) {
          waiting.add(request);
        } else {
          answering = true;
          serve(ctx, request);
        }
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  private void serve(ChannelHandlerContext ctx, Pending request) {
    FaultPlan plan = origin.plan();
    boolean healthCheck = FaultPlan.HEALTH_PATH.equals(request.path);
    origin.counters().request(healthCheck);
    if (healthCheck && plan.health() != Health.FOLLOW) {
      boolean up = plan.health() == Health.UP;
      origin.counters().outcome(up ? FaultOutcome.OK : FaultOutcome.ERROR);
      sendText(
          ctx,
          up ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
          up ? "ok\n" : "down\n",
          request.head,
          request.keepAlive);
      return;
    }
    Behaviour behaviour = plan.behaviourFor(request.path);
    RandomSource random = origin.random();
    FaultOutcome outcome = behaviour.pick(random.nextDouble());
    origin.counters().outcome(outcome);
    long delayNanos = outcome == FaultOutcome.HANG ? 0 : behaviour.latency().sampleNanos(random);
    origin
        .workers()
        .acquire(
            ctx.executor(), () -> work(ctx, request, behaviour, outcome, healthCheck, delayNanos));
  }

  /** With a worker: hang, or answer after the delay (held even if the client leaves meanwhile). */
  private void work(
      ChannelHandlerContext ctx,
      Pending request,
      Behaviour behaviour,
      FaultOutcome outcome,
      boolean healthCheck,
      long delayNanos) {
    holdsWorker = true;
    if (outcome == FaultOutcome.HANG) {
      // Reading stays off and nothing is written: the client waits until it gives up, and the
      // worker is held until then.
      if (!ctx.channel().isActive()) {
        releaseWorker();
      }
      return;
    }
    if (delayNanos <= 0) {
      answer(ctx, request, behaviour, outcome, healthCheck);
    } else {
      delaying = true;
      ctx.executor()
          .schedule(
              () -> {
                delaying = false;
                answer(ctx, request, behaviour, outcome, healthCheck);
              },
              delayNanos,
              TimeUnit.NANOSECONDS);
    }
  }

  private void releaseWorker() {
    if (holdsWorker) {
      holdsWorker = false;
      origin.workers().release();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    if (!delaying) {
      releaseWorker(); // a hang, or an answer cut short: the worker is free once the client left
    }
    super.channelInactive(ctx);
  }

  private void answer(
      ChannelHandlerContext ctx,
      Pending request,
      Behaviour behaviour,
      FaultOutcome outcome,
      boolean healthCheck) {
    if (!ctx.channel().isActive()) {
      releaseWorker(); // the client gave up during the delay; the work was done all the same
      return;
    }
    switch (outcome) {
      case RESET -> reset(ctx);
      case GARBAGE -> sendGarbage(ctx);
      case ERROR ->
          sendText(
              ctx,
              HttpResponseStatus.valueOf(behaviour.errorStatus()),
              "fault-origin: injected " + behaviour.errorStatus() + "\n",
              request.head,
              request.keepAlive);
      case MID_BODY_RESET -> sendHalfThenReset(ctx, behaviour);
      default -> {
        if (healthCheck) {
          int status = behaviour.status() >= 500 ? behaviour.status() : 200;
          sendText(
              ctx,
              HttpResponseStatus.valueOf(status),
              status == 200 ? "ok\n" : "down\n",
              request.head,
              request.keepAlive);
        } else {
          sendBody(ctx, request, behaviour);
        }
      }
    }
  }

  private void sendBody(ChannelHandlerContext ctx, Pending request, Behaviour behaviour) {
    String etag = behaviour.etag();
    boolean notModified = etag != null && matches(request.ifNoneMatch, etag);
    HttpResponse response =
        new DefaultHttpResponse(
            HttpVersion.HTTP_1_1,
            notModified
                ? HttpResponseStatus.NOT_MODIFIED
                : HttpResponseStatus.valueOf(behaviour.status()));
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=us-ascii");
    if (!notModified) {
      response.headers().set(HttpHeaderNames.CONTENT_LENGTH, behaviour.bodySize());
    }
    if (behaviour.cacheControl() != null) {
      response.headers().set(HttpHeaderNames.CACHE_CONTROL, behaviour.cacheControl());
    }
    if (etag != null) {
      response.headers().set(HttpHeaderNames.ETAG, etag);
    }
    HttpUtil.setKeepAlive(response, request.keepAlive);
    ctx.write(response);
    ChannelFuture done;
    if (notModified || request.head || behaviour.bodySize() == 0) {
      done = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
    } else {
      done = ctx.writeAndFlush(new HttpChunkedInput(new PatternBody(behaviour.bodySize())));
    }
    done.addListener(f -> afterAnswer(ctx, f.isSuccess() && request.keepAlive));
  }

  private void sendHalfThenReset(ChannelHandlerContext ctx, Behaviour behaviour) {
    HttpResponse response =
        new DefaultHttpResponse(
            HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(behaviour.status()));
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=us-ascii");
    response.headers().set(HttpHeaderNames.CONTENT_LENGTH, behaviour.bodySize());
    ctx.write(response);
    // Raw body bytes (no LastHttpContent): the encoder passes them through as content.
    int half = behaviour.bodySize() / 2;
    Object part = half > 0 ? new PatternBody(half) : Unpooled.EMPTY_BUFFER;
    ctx.writeAndFlush(part).addListener(f -> reset(ctx));
  }

  private static void sendGarbage(ChannelHandlerContext ctx) {
    // The HTTP encoder only accepts HTTP messages at the start of a response; garbage goes around
    // it.
    HttpServerCodec codec = ctx.pipeline().get(HttpServerCodec.class);
    if (codec != null) {
      ctx.pipeline().remove(codec);
    }
    ByteBuf bytes = Unpooled.wrappedBuffer(GARBAGE);
    ctx.writeAndFlush(bytes).addListener(f -> ctx.close());
  }

  /** Closes with SO_LINGER 0: the kernel drops unsent data and sends RST instead of FIN. */
  private static void reset(ChannelHandlerContext ctx) {
    if (ctx.channel().isActive()) {
      ctx.channel().config().setOption(ChannelOption.SO_LINGER, 0);
    }
    ctx.close();
  }

  private void sendText(
      ChannelHandlerContext ctx,
      HttpResponseStatus status,
      String text,
      boolean head,
      boolean keepAlive) {
    FullHttpResponse response =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            status,
            head ? Unpooled.EMPTY_BUFFER : Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII));
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN);
    response.headers().set(HttpHeaderNames.CONTENT_LENGTH, text.length());
    HttpUtil.setKeepAlive(response, keepAlive);
    ctx.writeAndFlush(response).addListener(f -> afterAnswer(ctx, f.isSuccess() && keepAlive));
  }

  private void afterAnswer(ChannelHandlerContext ctx, boolean keepOpen) {
    releaseWorker();
    if (!keepOpen) {
      waiting.clear();
      ctx.close();
      return;
    }
    Pending next = waiting.poll();
    if (next != null) {
      serve(ctx, next);
    } else {
      answering = false;
      ctx.channel().config().setAutoRead(true);
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // Clients of a fault origin reset and vanish all the time: close quietly.
    ctx.close();
  }

  private static boolean matches(@Nullable String ifNoneMatch, String etag) {
    if (ifNoneMatch == null) {
      return false;
    }
    String weakless = etag.startsWith("W/") ? etag.substring(2) : etag;
    for (String candidate : ifNoneMatch.split(",")) {
      String c = candidate.strip();
      if (c.equals("*")
          || c.equals(etag)
          || (c.startsWith("W/") ? c.substring(2) : c).equals(weakless)) {
        return true;
      }
    }
    return false;
  }

  /** The path of an origin-form ({@code /a?b}) or absolute-form ({@code http://h/a}) target. */
  static String pathOf(String uri) {
    if (uri.startsWith("/")) {
      return new QueryStringDecoder(uri).rawPath();
    }
    try {
      String path = URI.create(uri).getRawPath();
      return path == null || path.isEmpty() ? "/" : path;
    } catch (IllegalArgumentException e) {
      return uri;
    }
  }
}
