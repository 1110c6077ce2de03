package dev.parapet.proxy.flow;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One JSON line per request ({@code access_log: {path: FILE}}), in the format {@code parapet sim
 * replay} reads — {@code time} (epoch seconds), {@code route}, {@code status}, {@code latency_ms} —
 * plus method, target, attempts, the proxy's own error if it answered itself, and the client. So a
 * day of production traffic can be replayed against another breaker policy before enforcing it.
 *
 * <p>The event loop never waits for the disk: lines go into a bounded queue drained by one writer
 * thread; when the disk falls behind, lines are dropped and counted ({@link #dropped()}) rather
 * than slowing requests down. Status 499 means the client went away before the response was
 * complete. Hand-written rather than a Logback appender because the file is configuration of the
 * proxy (it changes per listener and must not depend on the logging setup), and the queue/drop
 * policy is exactly this.
 */
public final class AccessLog implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AccessLog.class);

  /** Lines held while the writer catches up. */
  static final int QUEUE = 65_536;

  /** Status recorded when the client left before the response was complete (nginx's code). */
  static final int CLIENT_CLOSED = 499;

  private final Path path;
  private final BlockingQueue<String> lines = new ArrayBlockingQueue<>(QUEUE);
  private final LongAdder dropped = new LongAdder();
  private final BufferedWriter out;
  private final Thread writer;

  /**
   * Opens {@code path} for appending (created if missing).
   *
   * @throws UncheckedIOException when the file cannot be opened
   */
  public AccessLog(Path path) {
    this.path = path;
    try {
      Path parent = path.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      this.out =
          Files.newBufferedWriter(
              path,
              StandardCharsets.UTF_8,
              StandardOpenOption.CREATE,
              StandardOpenOption.APPEND,
              StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new UncheckedIOException("access_log.path : " + path + " (cannot open: " + e + ")", e);
    }
    this.writer = new Thread(this::drain, "parapet-access-log");
    writer.setDaemon(true);
    writer.start();
  }

  /** Records one finished request. Never blocks. */
  void record(
      long epochMillis,
      String route,
      String method,
      String target,
      int status,
      long latencyNanos,
      int attempts,
      @Nullable String error,
      @Nullable String client,
      @Nullable String requestId) {
    StringBuilder b = new StringBuilder(192);
    b.append("{\"time\":");
    thousandths(b, epochMillis);
    b.append(",\"route\":");
    quote(b, route);
    b.append(",\"method\":");
    quote(b, method);
    b.append(",\"target\":");
    quote(b, target.length() > 2048 ? target.substring(0, 2048) : target);
    b.append(",\"status\":").append(status).append(",\"latency_ms\":");
    thousandths(b, Math.max(0, latencyNanos) / 1000);
    b.append(",\"attempts\":").append(attempts);
    if (error != null) {
      b.append(",\"error\":");
      quote(b, error);
    }
    if (client != null) {
      b.append(",\"client\":");
      quote(b, client);
    }
    if (requestId != null) {
      b.append(",\"request_id\":");
      quote(b, requestId);
    }
    b.append('}');
    if (!lines.offer(b.toString())) {
      dropped.increment();
    }
  }

  /** Appends {@code value / 1000} with three decimals (no {@code String.format} per request). */
  private static void thousandths(StringBuilder b, long value) {
    long fraction = value % 1000;
    b.append(value / 1000).append('.');
    if (fraction < 100) {
      b.append('0');
    }
    if (fraction < 10) {
      b.append('0');
    }
    b.append(fraction);
  }

  private static void quote(StringBuilder b, String s) {
    b.append('"');
    JsonStringEncoder.getInstance().quoteAsString(s, b);
    b.append('"');
  }

  /** Lines dropped because the writer fell behind. */
  public long dropped() {
    return dropped.sum();
  }

  Path path() {
    return path;
  }

  private void drain() {
    try {
      for (; ; ) {
        String line = lines.poll(1, TimeUnit.SECONDS);
        if (line == null) {
          continue;
        }
        if (line.isEmpty()) { // close(): everything before it is written
          out.flush();
          return;
        }
        out.write(line);
        out.write('\n');
        if (lines.isEmpty()) {
          out.flush();
        }
      }
    } catch (IOException e) {
      LOG.error("access log {}: writing failed, no further lines are written", path, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Writes what is queued, then closes the file. */
  @Override
  public void close() {
    try {
      lines.put("");
      writer.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      out.close();
    } catch (IOException e) {
      LOG.warn("access log {}: close failed", path, e);
    }
  }
}
