package dev.parapet.proxy.testing;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * An origin for cache tests: every response carries the configured header fields; a request whose
 * {@code If-None-Match} equals the configured {@code ETag}, or whose {@code If-Modified-Since}
 * equals the configured {@code Last-Modified}, gets 304. The body is {@code body of <target>}, or
 * {@link #bodyBytes} bytes when that is set. Records every request's method, path and header
 * fields.
 */
public final class CacheOrigin extends LoopbackOrigin {
  /** What the origin saw. */
  public record Seen(String method, String path, Map<String, List<String>> headers) {
    public @Nullable String header(String name) {
      for (Map.Entry<String, List<String>> e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) {
          return String.join(",", e.getValue());
        }
      }
      return null;
    }
  }

  public final AtomicInteger calls = new AtomicInteger();
  public final List<Seen> seen = new CopyOnWriteArrayList<>();
  public volatile int status = 200;
  public volatile long delayMillis;
  public volatile int bodyBytes = -1;

  /** Answer every conditional request with 304 and the configured fields, whatever it names. */
  public volatile boolean notModifiedToAnyConditional;

  /** Answer conditional requests in full, as an origin that does not implement them. */
  public volatile boolean ignoreConditionals;

  private volatile List<String[]> headers = List.of();

  public CacheOrigin() throws IOException {
    start();
  }

  /** Sets the response header fields, as name, value, name, value … */
  public void headers(String... nameValues) {
    List<String[]> list = new ArrayList<>();
    for (int i = 0; i < nameValues.length; i += 2) {
      list.add(new String[] {nameValues[i], nameValues[i + 1]});
    }
    headers = List.copyOf(list);
  }

  public int count() {
    return calls.get();
  }

  public Seen last() {
    return seen.get(seen.size() - 1);
  }

  @Override
  protected void handle(HttpExchange ex) throws IOException {
    calls.incrementAndGet();
    seen.add(
        new Seen(
            ex.getRequestMethod(),
            ex.getRequestURI().toString(),
            Map.copyOf(ex.getRequestHeaders())));
    readBody(ex);
    pause(delayMillis);
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
    boolean conditional = inm != null || ims != null;
    if (ignoreConditionals) {
      etag = null;
      lastModified = null;
    }
    if ((etag != null && etag.equals(inm))
        || (lastModified != null && lastModified.equals(ims))
        || (notModifiedToAnyConditional && conditional)) {
      ex.sendResponseHeaders(304, -1);
      ex.close();
      return;
    }
    byte[] body;
    int size = bodyBytes;
    if (size >= 0) {
      body = new byte[size];
      Arrays.fill(body, (byte) 'x');
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
}
