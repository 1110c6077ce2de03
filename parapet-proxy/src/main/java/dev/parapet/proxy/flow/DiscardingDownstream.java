package dev.parapet.proxy.flow;

import dev.parapet.proxy.http.Downstream;
import dev.parapet.proxy.http.ProxyError;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

/**
 * The downstream of a request nobody waits for (a background refresh): everything written is
 * released. What matters of such a response is recorded by the decorator in front of it.
 */
final class DiscardingDownstream implements Downstream {
  private final EventLoop loop;
  private final ByteBufAllocator alloc;

  DiscardingDownstream(EventLoop loop, ByteBufAllocator alloc) {
    this.loop = loop;
    this.alloc = alloc;
  }

  @Override
  public EventLoop eventLoop() {
    return loop;
  }

  @Override
  public ByteBufAllocator alloc() {
    return alloc;
  }

  @Override
  public void head(HttpResponse head, @Nullable String proxyStatus) {
    ReferenceCountUtil.release(head);
  }

  @Override
  public void content(HttpContent content) {
    content.release();
  }

  @Override
  public void answer(FullHttpResponse response) {
    response.release();
  }

  @Override
  public void error(ProxyError error, String detail, FullHttpResponse response) {
    response.release();
  }

  @Override
  public void reset(ProxyError error, String detail) {}

  @Override
  public boolean isWritable() {
    return true;
  }

  @Override
  public void readRequestBody(boolean on) {}
}
