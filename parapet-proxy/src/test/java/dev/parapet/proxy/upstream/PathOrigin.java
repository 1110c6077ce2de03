package dev.parapet.proxy.upstream;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An origin host for balancing tests (the JDK's HTTP server, on its own threads): counts health
 * checks apart from other requests, answers each with its own status, and can hold requests until
 * released to keep them in flight.
 */
final class PathOrigin implements AutoCloseable {
  static final String HEALTH = "/healthz";

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();
  final String name;
  final AtomicInteger status = new AtomicInteger(200);
  final AtomicInteger healthStatus = new AtomicInteger(200);
  final AtomicInteger requests = new AtomicInteger();
  final AtomicInteger healthChecks = new AtomicInteger();
  final AtomicInteger held = new AtomicInteger();
  final List<String> paths = new CopyOnWriteArrayList<>();
  volatile boolean hold;
  private final CountDownLatch release = new CountDownLatch(1);

  PathOrigin(String name) throws IOException {
    this.name = name;
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
    server.setExecutor(threads);
    server.createContext("/", this::handle);
    server.start();
  }

  InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", server.getAddress().getPort());
  }

  /** Lets held requests (and every later one) answer. */
  void releaseHeld() {
    hold = false;
    release.countDown();
  }

  private void handle(HttpExchange ex) throws IOException {
    try (InputStream in = ex.getRequestBody()) {
      in.readAllBytes();
    }
    String path = ex.getRequestURI().getPath();
    int code;
    if (path.equals(HEALTH)) {
      healthChecks.incrementAndGet();
      code = healthStatus.get();
    } else {
      requests.incrementAndGet();
      paths.add(path);
      code = status.get();
      if (hold) {
        held.incrementAndGet();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    byte[] body = (name + " " + path).getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("X-Host", name);
    ex.sendResponseHeaders(code, body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }

  @Override
  public void close() {
    releaseHeld();
    server.stop(0);
    threads.shutdownNow();
  }
}
