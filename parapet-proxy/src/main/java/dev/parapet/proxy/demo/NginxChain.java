package dev.parapet.proxy.demo;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The same edge → shield → origin chain built from nginx the way seed 001 describes the
 * anti-pattern: 30 s connect and read timeouts at every tier and retries on errors, timeouts and
 * 502/503/504 at every tier ({@code proxy_next_upstream}, two tries; each upstream lists its one
 * server twice so a retry has somewhere to go). nginx's own passive check ({@code max_fails=1
 * fail_timeout=10s}, its default) stays on: this is nginx as commonly run, not a strawman. One
 * nginx process (one worker) serves both tiers on 127.0.0.1; it runs in the foreground and is
 * stopped by {@link #close()}.
 */
final class NginxChain implements AutoCloseable {
  private final Process process;
  private final Path dir;
  private final int edgePort;

  private NginxChain(Process process, Path dir, int edgePort) {
    this.process = process;
    this.dir = dir;
    this.edgePort = edgePort;
  }

  /** The nginx binary: {@code /usr/sbin/nginx} or the first {@code nginx} on PATH; null if none. */
  static @Nullable Path find() {
    Path sbin = Path.of("/usr/sbin/nginx");
    if (Files.isExecutable(sbin)) {
      return sbin;
    }
    String path = System.getenv("PATH");
    if (path != null) {
      for (String d : path.split(":")) {
        Path p = Path.of(d, "nginx");
        if (Files.isExecutable(p)) {
          return p;
        }
      }
    }
    return null;
  }

  /** The configuration for both tiers in front of the demo's origins. */
  static String config(Path dir, int edgePort, int shieldPort, int apiPort, int staticPort) {
    return """
    worker_processes 1;
    daemon off;
    pid %1$s/nginx.pid;
    error_log %1$s/error.log crit;
    events { worker_connections 16384; }
    http {
      access_log off;
      client_body_temp_path %1$s/client_body;
      proxy_temp_path %1$s/proxy;
      fastcgi_temp_path %1$s/fastcgi;
      uwsgi_temp_path %1$s/uwsgi;
      scgi_temp_path %1$s/scgi;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_connect_timeout 30s;
      proxy_send_timeout 30s;
      proxy_read_timeout 30s;
      proxy_next_upstream error timeout http_502 http_503 http_504;
      proxy_next_upstream_tries 2;
      upstream api_origin { server 127.0.0.1:%4$d; server 127.0.0.1:%4$d; keepalive 64; }
      upstream static_origin { server 127.0.0.1:%5$d; server 127.0.0.1:%5$d; keepalive 64; }
      upstream shield { server 127.0.0.1:%3$d; server 127.0.0.1:%3$d; keepalive 64; }
      server {
        listen 127.0.0.1:%3$d;
        location /api/ { proxy_pass http://api_origin; }
        location /static/ { proxy_pass http://static_origin; }
      }
      server {
        listen 127.0.0.1:%2$d;
        location / { proxy_pass http://shield; }
      }
    }
    """
        .formatted(dir, edgePort, shieldPort, apiPort, staticPort);
  }

  /**
   * Starts nginx in front of the origins on {@code apiPort} and {@code staticPort}.
   *
   * @throws IOException when nginx cannot be started or does not listen within 10 s
   */
  static NginxChain start(Path nginx, int apiPort, int staticPort)
      throws IOException, InterruptedException {
    Path dir =
        Files.createTempDirectory(
            "parapet-nginx",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxrwxrwx")));
    // Workers run as an unprivileged user when the master is root: let them use the temp paths.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    int edge = freePort();
    int shield = freePort();
    Path conf = dir.resolve("nginx.conf");
    Files.writeString(conf, config(dir, edge, shield, apiPort, staticPort), StandardCharsets.UTF_8);
    Process p =
        new ProcessBuilder(nginx.toString(), "-c", conf.toString(), "-p", dir.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("stdout.log").toFile())
            .start();
    NginxChain chain = new NginxChain(p, dir, edge);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        String log = Files.readString(dir.resolve("stdout.log"));
        chain.close();
        throw new IOException("nginx exited at start: " + log.strip());
      }
      try (Socket s = new Socket("127.0.0.1", edge)) {
        return chain;
      } catch (IOException notYet) {
        TimeUnit.MILLISECONDS.sleep(50);
      }
    }
    chain.close();
    throw new IOException("nginx did not listen on 127.0.0.1:" + edge + " within 10 s");
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  InetSocketAddress edgeAddress() {
    return new InetSocketAddress("127.0.0.1", edgePort);
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      // a temp dir left behind is harmless
    }
  }
}
