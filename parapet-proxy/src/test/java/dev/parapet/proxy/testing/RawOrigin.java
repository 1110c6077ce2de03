package dev.parapet.proxy.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * An origin that answers with exact bytes, for what a well-behaved server (and so {@link
 * LoopbackOrigin}'s JDK server) never sends: malformed status lines, odd framing, bodies cut off by
 * a close. It reads each request head up to its empty line (and a body by its {@code
 * Content-Length}; a chunked request body is not read), records the head, and writes the reply its
 * script gives for that request, closing the connection after it when the reply says so.
 *
 * <pre>{@code
 * RawOrigin o = fx.closeLater(RawOrigin.answering("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"));
 * ... o.address() as a pool's host; then o.requests(), o.connections()
 * }</pre>
 *
 * <p>On 127.0.0.1 and an ephemeral port; one platform thread accepts, one virtual thread serves
 * each connection, so a test never waits on the proxy's event loops. {@link #close()} closes the
 * listener and every connection still open.
 */
public final class RawOrigin implements AutoCloseable {
  /**
   * What to write for one request: {@code bytes} as ISO-8859-1 (one byte per character), then
   * whether to close the connection.
   */
  public record Reply(String bytes, boolean close) {
    /** Writes {@code bytes} and keeps the connection open for the next request. */
    public static Reply keepOpen(String bytes) {
      return new Reply(bytes, false);
    }

    /**
     * Writes {@code bytes} and closes the connection (a body delimited, or cut off, by a close).
     */
    public static Reply thenClose(String bytes) {
      return new Reply(bytes, true);
    }
  }

  private final ServerSocket server;
  private final IntFunction<Reply> script;
  private final List<String> requests = new CopyOnWriteArrayList<>();
  private final AtomicInteger connections = new AtomicInteger();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();

  private RawOrigin(IntFunction<Reply> script) throws IOException {
    this.script = script;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "raw-origin-" + server.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /**
   * Answers the {@code n}th request it reads (from 0, over all connections) with {@code script(n)}.
   */
  public static RawOrigin start(IntFunction<Reply> script) throws IOException {
    return new RawOrigin(script);
  }

  /** Answers every request with {@code response}, keeping the connection open. */
  public static RawOrigin answering(String response) throws IOException {
    return start(n -> Reply.keepOpen(response));
  }

  /** Answers every request with {@code response} and closes the connection after it. */
  public static RawOrigin answeringThenClosing(String response) throws IOException {
    return start(n -> Reply.thenClose(response));
  }

  public InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", server.getLocalPort());
  }

  /** The request heads read so far, in order, each up to and including its empty line. */
  public List<String> requests() {
    return List.copyOf(requests);
  }

  /** Connections accepted so far. */
  public int connections() {
    return connections.get();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        connections.incrementAndGet();
        open.add(s);
        Thread.ofVirtual().start(() -> serve(s));
      } catch (IOException e) {
        return; // closed: the end of the test
      }
    }
  }

  private void serve(Socket s) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      String head;
      while ((head = readHead(in)) != null) {
        int n;
        synchronized (requests) {
          n = requests.size();
          requests.add(head);
        }
        in.skipNBytes(contentLength(head));
        Reply r = script.apply(n);
        out.write(r.bytes().getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        if (r.close()) {
          return;
        }
      }
    } catch (IOException e) {
      // the proxy closed the connection, or the test ended
    } finally {
      open.remove(s);
    }
  }

  /** The next request head, or null when the connection ends first. */
  private static @Nullable String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    int b;
    while ((b = in.read()) >= 0) {
      head.write(b);
      matched = b == "\r\n\r\n".charAt(matched) ? matched + 1 : (b == '\r' ? 1 : 0);
      if (matched == 4) {
        return head.toString(StandardCharsets.ISO_8859_1);
      }
    }
    return null;
  }

  private static long contentLength(String head) {
    for (String line : head.split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0
          && line.substring(0, colon).trim().toLowerCase(Locale.ROOT).equals("content-length")) {
        return Long.parseLong(line.substring(colon + 1).trim());
      }
    }
    return 0;
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket s : open) {
      s.close();
    }
  }
}
