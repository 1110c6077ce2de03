package dev.parapet.proxy.testing;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An origin host for balancing tests: counts health checks ({@link #HEALTH}) apart from other
 * requests, answers each with its own status, a body {@code <name> <path>} and {@code X-Host:
 * <name>}, and can hold requests until released to keep them in flight.
 */
public final class PathOrigin extends LoopbackOrigin {
  public static final String HEALTH = "/healthz";

  public final String name;
  public final AtomicInteger status = new AtomicInteger(200);
  public final AtomicInteger healthStatus = new AtomicInteger(200);
  public final AtomicInteger requests = new AtomicInteger();
  public final AtomicInteger healthChecks = new AtomicInteger();
  public final AtomicInteger held = new AtomicInteger();
  public final List<String> paths = new CopyOnWriteArrayList<>();
  public volatile boolean hold;
  private final CountDownLatch release = new CountDownLatch(1);

  public PathOrigin(String name) throws IOException {
    this.name = name;
    start();
  }

  /** Lets held requests (and every later one) answer. */
  public void releaseHeld() {
    hold = false;
    release.countDown();
  }

  @Override
  protected void handle(HttpExchange ex) throws IOException {
    readBody(ex);
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
    super.close();
  }
}
