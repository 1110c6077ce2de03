package dev.parapet.proxy.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the system's curl as an HTTP/2 client (h2c with prior knowledge), the way a user would; the
 * test is skipped where no curl with HTTP/2 is installed.
 */
final class Curl {
  /** One response as curl saw it: the protocol, status, fields (lower-case names) and body. */
  record Response(String protocol, int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private Curl() {}

  static void assumeHttp2() throws IOException, InterruptedException {
    boolean ok;
    try {
      Process p = new ProcessBuilder("curl", "--version").redirectErrorStream(true).start();
      String v = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      ok = p.waitFor(30, TimeUnit.SECONDS) && v.contains("HTTP2");
    } catch (IOException e) {
      ok = false;
    }
    assumeTrue(ok, "curl with HTTP/2 support on PATH");
  }

  /** {@code curl --http2-prior-knowledge} with {@code args} (the URL among them). */
  static Response h2c(Path dir, String... args) throws IOException, InterruptedException {
    Path headers = Files.createTempFile(dir, "h", ".txt");
    Path body = Files.createTempFile(dir, "b", ".txt");
    List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "--http2-prior-knowledge"));
    cmd.addAll(List.of("--max-time", "30", "-D", headers.toString(), "-o", body.toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("curl %s: %s", cmd, out).isZero();
    List<String> lines = Files.readAllLines(headers, StandardCharsets.ISO_8859_1);
    String[] status = lines.get(0).trim().split(" ");
    Map<String, String> fields = new LinkedHashMap<>();
    for (String line : lines.subList(1, lines.size())) {
      int colon = line.indexOf(':');
      if (colon > 0) {
        fields.merge(
            line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
            line.substring(colon + 1).trim(),
            (a, b) -> a + ", " + b);
      }
    }
    return new Response(
        status[0],
        Integer.parseInt(status[1]),
        fields,
        Files.readString(body, StandardCharsets.UTF_8));
  }
}
