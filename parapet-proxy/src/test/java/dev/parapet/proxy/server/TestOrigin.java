package dev.parapet.proxy.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A plain origin for data-plane tests (the JDK's HTTP server on its own threads, so a delay here
 * never blocks the proxy): answers with a configurable status and delay, and records what it saw.
 */
public final class TestOrigin implements AutoCloseable {
  final HttpServer server;
  final ExecutorService threads = Executors.newCachedThreadPool();
  public final AtomicInteger status = new AtomicInteger(200);
  public final AtomicLong delayMillis = new AtomicLong();
  public final AtomicInteger calls = new AtomicInteger();
  public final List<Map<String, List<String>>> seenHeaders = new CopyOnWriteArrayList<>();
  final List<byte[]> seenBodies = new CopyOnWriteArrayList<>();

  public TestOrigin() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
    server.setExecutor(threads);
    server.createContext("/", this::handle);
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  public InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port());
  }

  private void handle(HttpExchange ex) throws IOException {
    calls.incrementAndGet();
    seenHeaders.add(Map.copyOf(ex.getRequestHeaders()));
    try (InputStream in = ex.getRequestBody()) {
      seenBodies.add(in.readAllBytes());
    }
    long delay = delayMillis.get();
    if (delay > 0) {
      try {
        Thread.sleep(delay); // an origin thread, not the proxy's event loop
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    byte[] body = ("hello from origin " + ex.getRequestURI()).getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("X-Origin", "test");
    ex.getResponseHeaders().add("Connection", "X-Hop");
    ex.getResponseHeaders().add("X-Hop", "must not pass");
    ex.sendResponseHeaders(status.get(), body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
