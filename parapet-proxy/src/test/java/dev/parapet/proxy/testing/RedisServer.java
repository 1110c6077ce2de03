package dev.parapet.proxy.testing;

import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * A real {@code redis-server} (Debian package {@code redis-server}) on a free loopback port, with
 * nothing written to disk ({@code --save '' --appendonly no}); stopped and started again on the
 * same port to play an outage. {@code bin/test} installs the package as root and then sets {@code
 * PARAPET_REQUIRE_REDIS=1}, which makes a missing binary a failure; without it (a developer machine
 * without the package) the tests that need Redis are skipped, saying why.
 */
public final class RedisServer implements AutoCloseable {
  private final String exe;
  private final int port;
  private final Path dir;
  private @Nullable Process process;

  private RedisServer(String exe, int port, Path dir) {
    this.exe = exe;
    this.port = port;
    this.dir = dir;
  }

  /** Starts one in {@code dir} (its log goes there), or skips/fails the test without the binary. */
  public static RedisServer start(Path dir) throws Exception {
    String exe = find();
    if (exe == null) {
      String message =
          "redis-server : not found on PATH or in /usr/bin, /usr/sbin (expected: the Debian package"
              + " redis-server, apt-get install redis-server)";
      if ("1".equals(System.getenv("PARAPET_REQUIRE_REDIS"))) {
        fail(message + "; PARAPET_REQUIRE_REDIS=1, so a missing redis-server is a failure");
      }
      Assumptions.abort(message + "; skipped because PARAPET_REQUIRE_REDIS is not 1");
    }
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    RedisServer r = new RedisServer(exe, port, dir);
    r.startAgain();
    return r;
  }

  private static @Nullable String find() {
    String path = System.getenv("PATH");
    if (path != null) {
      for (String d : path.split(File.pathSeparator)) {
        Path p = Path.of(d, "redis-server");
        if (Files.isExecutable(p)) {
          return p.toString();
        }
      }
    }
    for (String d : new String[] {"/usr/bin", "/usr/sbin", "/usr/local/bin"}) {
      Path p = Path.of(d, "redis-server");
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return null;
  }

  public int port() {
    return port;
  }

  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  /** Starts the server (again, on the same port) and waits until it answers PING. */
  public void startAgain() throws Exception {
    if (process != null && process.isAlive()) {
      return;
    }
    process =
        new ProcessBuilder(
                exe,
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                dir.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis.log").toFile()))
            .start();
    long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!answersPing()) {
      if (!process.isAlive()) {
        fail(
            "redis-server : exited with "
                + process.exitValue()
                + " (expected: listening on "
                + port
                + "); see "
                + dir.resolve("redis.log"));
      }
      if (System.nanoTime() - until > 0) {
        fail("redis-server : no PING answer on port " + port + " after 20 s");
      }
      Thread.sleep(20);
    }
  }

  /** Stops the server (SIGTERM, then SIGKILL) and waits for it to be gone. */
  public void stop() throws InterruptedException {
    Process p = process;
    if (p == null) {
      return;
    }
    p.destroy();
    if (!p.waitFor(10, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
    process = null;
  }

  /** Sends one inline command and returns the first reply line ({@code +PONG}, {@code :42}). */
  public String command(String line) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
      s.setSoTimeout(2000);
      OutputStream out = s.getOutputStream();
      out.write((line + "\r\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
      InputStream in = s.getInputStream();
      StringBuilder b = new StringBuilder();
      int c;
      while ((c = in.read()) != -1 && c != '\n') {
        if (c != '\r') {
          b.append((char) c);
        }
      }
      return b.toString();
    }
  }

  private boolean answersPing() {
    try {
      return command("PING").equals("+PONG");
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
