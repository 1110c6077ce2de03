package dev.parapet.proxy.flow;

import dev.parapet.proxy.http.Downstream;
import dev.parapet.proxy.http.ProxyError;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * A downstream for tests: records what a request answers, as lines ({@code head 200}, {@code
 * content 1024}, {@code last}, {@code answer 200}, {@code error SHED 503}, {@code reset
 * CONNECTION_TERMINATED}), releases what it is given, and completes {@link #done} when the response
 * is complete. A write after that fails the test (it is recorded as {@code AFTER-END ...}).
 */
final class RecordingDownstream implements Downstream {
  final List<String> events = new CopyOnWriteArrayList<>();
  final CompletableFuture<String> done = new CompletableFuture<>();
  private final EventLoop loop;
  volatile boolean writable = true;
  volatile @Nullable String lastProxyStatus;
  volatile @Nullable String lastBody;

  RecordingDownstream(EventLoop loop) {
    this.loop = loop;
  }

  private void record(String event, boolean completes) {
    if (done.isDone()) {
      events.add("AFTER-END " + event);
      return;
    }
    events.add(event);
    if (completes) {
      done.complete(event);
    }
  }

  @Override
  public EventLoop eventLoop() {
    return loop;
  }

  @Override
  public ByteBufAllocator alloc() {
    return ByteBufAllocator.DEFAULT;
  }

  @Override
  public void head(HttpResponse head, @Nullable String proxyStatus) {
    lastProxyStatus = proxyStatus;
    record("head " + head.status().code(), false);
    ReferenceCountUtil.release(head);
  }

  @Override
  public void content(HttpContent content) {
    boolean last = content instanceof LastHttpContent;
    if (content.content().isReadable()) {
      record("content " + content.content().readableBytes(), false);
    }
    content.release();
    if (last) {
      record("last", true);
    }
  }

  @Override
  public void answer(FullHttpResponse response) {
    lastBody = response.content().toString(java.nio.charset.StandardCharsets.UTF_8);
    response.release();
    record("answer " + response.status().code(), true);
  }

  @Override
  public void error(ProxyError error, String detail, FullHttpResponse response) {
    lastBody = response.content().toString(java.nio.charset.StandardCharsets.UTF_8);
    response.release();
    record("error " + error + " " + response.status().code(), true);
  }

  @Override
  public void reset(ProxyError error, String detail) {
    record("reset " + error, true);
  }

  @Override
  public boolean isWritable() {
    return writable;
  }

  @Override
  public void readRequestBody(boolean on) {}
}
