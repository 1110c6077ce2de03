package dev.parapet.proxy.faultorigin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.concurrent.EventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The fault origin's control endpoint:
 *
 * <pre>
 * GET  /plan         the plan in force, as JSON
 * PUT  /plan         apply a JSON object of changed fields; answers the new plan
 * POST /plan/reset   back to the plan the origin started with
 * GET  /stats        counters as JSON
 * POST /stats/reset  counters to zero
 * </pre>
 *
 * A plan change answers only once the origin listener is open or closed as the plan asks, without
 * blocking this event loop (the answer is written when the listener's future completes). Errors are
 * JSON too: {@code {"error": "error_rate: expected a percentage in [0%, 100%], found '150%'"}}.
 */
final class ControlHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private final FaultOrigin origin;

  ControlHandler(FaultOrigin origin) {
    this.origin = origin;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
    boolean keepAlive = HttpUtil.isKeepAlive(request);
    if (request.decoderResult().isFailure()) {
      sendError(ctx, HttpResponseStatus.BAD_REQUEST, "request : not valid HTTP/1.1", false);
      return;
    }
    String path = new QueryStringDecoder(request.uri()).path();
    HttpMethod method = request.method();
    switch (path) {
      case "/plan" -> {
        if (HttpMethod.GET.equals(method)) {
          send(ctx, HttpResponseStatus.OK, FaultPlanJson.write(origin.plan()), keepAlive);
        } else if (HttpMethod.PUT.equals(method) || HttpMethod.PATCH.equals(method)) {
          String body = request.content().toString(StandardCharsets.UTF_8);
          FaultPlan base = origin.plan();
          CompletableFuture<FaultPlan> change;
          try {
            FaultPlan next = FaultPlanJson.update(base, body);
            // If another change landed since `base` was read, apply the same fields to it.
            change =
                origin.updatePlan(
                    current -> current == base ? next : FaultPlanJson.update(current, body));
          } catch (PlanException e) {
            sendError(
                ctx, HttpResponseStatus.BAD_REQUEST, String.valueOf(e.getMessage()), keepAlive);
            return;
          }
          answerPlanChange(ctx, change, keepAlive);
        } else {
          methodNotAllowed(ctx, "GET, PUT, PATCH", keepAlive);
        }
      }
      case "/plan/reset" -> {
        if (HttpMethod.POST.equals(method)) {
          answerPlanChange(ctx, origin.resetPlan(), keepAlive);
        } else {
          methodNotAllowed(ctx, "POST", keepAlive);
        }
      }
      case "/stats" -> {
        if (HttpMethod.GET.equals(method)) {
          send(ctx, HttpResponseStatus.OK, statsJson(origin.stats()), keepAlive);
        } else {
          methodNotAllowed(ctx, "GET", keepAlive);
        }
      }
      case "/stats/reset" -> {
        if (HttpMethod.POST.equals(method)) {
          origin.resetStats();
          send(ctx, HttpResponseStatus.OK, statsJson(origin.stats()), keepAlive);
        } else {
          methodNotAllowed(ctx, "POST", keepAlive);
        }
      }
      default ->
          sendError(
              ctx,
              HttpResponseStatus.NOT_FOUND,
              "path : " + path + " (expected: /plan, /plan/reset, /stats or /stats/reset)",
              keepAlive);
    }
  }

  private void answerPlanChange(
      ChannelHandlerContext ctx, CompletableFuture<FaultPlan> change, boolean keepAlive) {
    EventExecutor loop = ctx.executor();
    change.whenComplete((plan, error) ->
        loop.execute(() -> {
          if (error == null) {
            send(ctx, HttpResponseStatus.OK, FaultPlanJson.write(plan), keepAlive);
          } else {
            Throwable cause = error.getCause() != null ? error.getCause() : error;
            HttpResponseStatus status =
                cause instanceof PlanException
                    ? HttpResponseStatus.BAD_REQUEST
                    : HttpResponseStatus.INTERNAL_SERVER_ERROR;
            sendError(ctx, status, String.valueOf(cause.getMessage()), keepAlive);
          }
        }));
  }

  private static String statsJson(OriginStats stats) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("connections", stats.connections());
    node.put("requests", stats.requests());
    node.put("health_checks", stats.healthChecks());
    ObjectNode outcomes = node.putObject("outcomes");
    for (Map.Entry<FaultOutcome, Long> e : stats.outcomes().entrySet()) {
      outcomes.put(e.getKey().jsonName(), e.getValue());
    }
    return json(node);
  }

  private static String json(ObjectNode node) {
    try {
      return MAPPER.writeValueAsString(node) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("control answer : cannot be written as JSON (" + e + ")", e);
    }
  }

  private static void methodNotAllowed(ChannelHandlerContext ctx, String allow, boolean keepAlive) {
    FullHttpResponse response =
        response(
            HttpResponseStatus.METHOD_NOT_ALLOWED,
            errorJson("method : not allowed here (expected: " + allow + ")"));
    response.headers().set(HttpHeaderNames.ALLOW, allow);
    write(ctx, response, keepAlive);
  }

  private static void sendError(
      ChannelHandlerContext ctx, HttpResponseStatus status, String message, boolean keepAlive) {
    send(ctx, status, errorJson(message), keepAlive);
  }

  private static String errorJson(String message) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("error", message);
    return json(node);
  }

  private static void send(
      ChannelHandlerContext ctx, HttpResponseStatus status, String json, boolean keepAlive) {
    write(ctx, response(status, json), keepAlive);
  }

  private static FullHttpResponse response(HttpResponseStatus status, String json) {
    FullHttpResponse response =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1, status, Unpooled.copiedBuffer(json, StandardCharsets.UTF_8));
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
    response.headers().set(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
    return response;
  }

  private static void write(
      ChannelHandlerContext ctx, FullHttpResponse response, boolean keepAlive) {
    HttpUtil.setKeepAlive(response, keepAlive);
    if (keepAlive) {
      ctx.writeAndFlush(response);
    } else {
      ctx.writeAndFlush(response).addListener(f -> ctx.close());
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
