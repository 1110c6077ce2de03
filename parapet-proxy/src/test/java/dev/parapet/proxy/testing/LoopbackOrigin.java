package dev.parapet.proxy.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * An origin for end-to-end tests: the JDK's HTTP server on 127.0.0.1, an ephemeral port and threads
 * of its own, so an origin that sleeps or holds a request never blocks the proxy's event loops. A
 * subclass answers in {@link #handle} and calls {@link #start()} last in its constructor, once the
 * fields its handler reads are set.
 */
public abstract class LoopbackOrigin implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();

  protected LoopbackOrigin() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
    server.setExecutor(threads);
  }

  /** Starts answering requests. */
  protected final void start() {
    server.createContext("/", this::handle);
    server.start();
  }

  /** Answers one request, on one of this origin's threads. */
  protected abstract void handle(HttpExchange exchange) throws IOException;

  public final int port() {
    return server.getAddress().getPort();
  }

  public final InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port());
  }

  /** The whole request body. */
  protected static byte[] readBody(HttpExchange exchange) throws IOException {
    try (InputStream in = exchange.getRequestBody()) {
      return in.readAllBytes();
    }
  }

  /** A slow origin: sleeps on this origin's thread, never on the proxy's event loop. */
  protected static void pause(long millis) {
    if (millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
