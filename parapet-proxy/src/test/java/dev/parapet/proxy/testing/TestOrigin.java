package dev.parapet.proxy.testing;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A plain origin for data-plane tests: answers {@code hello from origin <target>} with a
 * configurable status and delay, a hop-by-hop field the proxy must drop ({@code Connection: X-Hop},
 * {@code X-Hop}) and {@code X-Origin: test}; records every request's header fields and body.
 */
public final class TestOrigin extends LoopbackOrigin {
  public final AtomicInteger status = new AtomicInteger(200);
  public final AtomicLong delayMillis = new AtomicLong();
  public final AtomicInteger calls = new AtomicInteger();
  public final List<Map<String, List<String>>> seenHeaders = new CopyOnWriteArrayList<>();
  public final List<byte[]> seenBodies = new CopyOnWriteArrayList<>();

  public TestOrigin() throws IOException {
    start();
  }

  @Override
  protected void handle(HttpExchange ex) throws IOException {
    calls.incrementAndGet();
    seenHeaders.add(Map.copyOf(ex.getRequestHeaders()));
    seenBodies.add(readBody(ex));
    pause(delayMillis.get());
    byte[] body = ("hello from origin " + ex.getRequestURI()).getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("X-Origin", "test");
    ex.getResponseHeaders().add("Connection", "X-Hop");
    ex.getResponseHeaders().add("X-Hop", "must not pass");
    ex.sendResponseHeaders(status.get(), body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }
}
