package dev.parapet.proxy.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An origin for cache tests (the JDK's HTTP server on its own threads): every response carries the
 * configured header fields; a request whose {@code If-None-Match} equals the configured {@code
 * ETag}, or whose {@code If-Modified-Since} equals the configured {@code Last-Modified}, gets 304.
 * Records every request's method, path and header fields.
 */
final class CacheOrigin implements AutoCloseable {
  /** What the origin saw. */
  record Seen(String method, String path, Map<String, List<String>> headers) {
    String header(String name) {
      for (Map.Entry<String, List<String>> e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) {
          return String.join(",", e.getValue());
        }
      }
      return null;
    }
  }

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();
  final AtomicInteger calls = new AtomicInteger();
  final List<Seen> seen = new CopyOnWriteArrayList<>();
  volatile int status = 200;
  volatile long delayMillis;
  volatile int bodyBytes = -1;
  volatile List<String[]> headers = List.of();

  CacheOrigin() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
    server.setExecutor(threads);
    server.createContext("/", this::handle);
    server.start();
  }

  InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", server.getAddress().getPort());
  }

  /** Sets the response header fields, as name, value, name, value … */
  void headers(String... nameValues) {
    List<String[]> list = new ArrayList<>();
    for (int i = 0; i < nameValues.length; i += 2) {
      list.add(new String[] {nameValues[i], nameValues[i + 1]});
    }
    headers = List.copyOf(list);
  }

  int count() {
    return calls.get();
  }

  Seen last() {
    return seen.get(seen.size() - 1);
  }

  private void handle(HttpExchange ex) throws IOException {
    calls.incrementAndGet();
    seen.add(
        new Seen(
            ex.getRequestMethod(),
            ex.getRequestURI().toString(),
            Map.copyOf(ex.getRequestHeaders())));
    try (InputStream in = ex.getRequestBody()) {
      in.readAllBytes();
    }
    long delay = delayMillis;
    if (delay > 0) {
      try {
        Thread.sleep(delay); // an origin thread, never the proxy's event loop
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    String etag = null;
    String lastModified = null;
    for (String[] h : headers) {
      ex.getResponseHeaders().add(h[0], h[1]);
      if (h[0].equalsIgnoreCase("ETag")) {
        etag = h[1];
      } else if (h[0].equalsIgnoreCase("Last-Modified")) {
        lastModified = h[1];
      }
    }
    String inm = ex.getRequestHeaders().getFirst("If-None-Match");
    String ims = ex.getRequestHeaders().getFirst("If-Modified-Since");
    if ((etag != null && etag.equals(inm)) || (lastModified != null && lastModified.equals(ims))) {
      ex.sendResponseHeaders(304, -1);
      ex.close();
      return;
    }
    byte[] body;
    int size = bodyBytes;
    if (size >= 0) {
      body = new byte[size];
      java.util.Arrays.fill(body, (byte) 'x');
    } else {
      body = ("body of " + ex.getRequestURI()).getBytes(StandardCharsets.UTF_8);
    }
    boolean head = ex.getRequestMethod().equals("HEAD");
    ex.sendResponseHeaders(status, head ? -1 : body.length);
    if (!head) {
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    }
    ex.close();
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
