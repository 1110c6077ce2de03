package dev.parapet.proxy.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.handler.codec.http.HttpUtil;

/**
 * Netty's {@code Expect: 100-continue} handling (a {@code 100 Continue} as soon as the head is
 * read, {@code Expect} removed before the request goes on), telling the connection which requests
 * it answered so: the origin's own {@code 100}, an interim response the connection otherwise
 * forwards, would be the client's second one.
 */
final class ContinueHandler extends HttpServerExpectContinueHandler {
  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (msg instanceof HttpRequest req && HttpUtil.is100ContinueExpected(req)) {
      ClientConnection c = ctx.pipeline().get(ClientConnection.class);
      if (c != null) {
        c.continueSent(req);
      }
    }
    super.channelRead(ctx, msg);
  }
}
