package dev.parapet.proxy.admin;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs the Debian {@code chromium} package headless and returns the DOM of a page after it ran its
 * scripts for a virtual-time budget ({@code --dump-dom}). Chromium's virtual time waits for pending
 * fetches, so a page that polls its JSON endpoint gets its answers within the budget.
 *
 * <p>{@code bin/test} installs chromium when it is missing and exports {@code
 * PARAPET_REQUIRE_BROWSER=1}: then a missing browser fails the test with a clear message. Without
 * that variable a missing browser skips the test.
 */
final class HeadlessChromium {
  private static final List<String> CANDIDATES =
      List.of("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome");

  private final Path binary;

  private HeadlessChromium(Path binary) {
    this.binary = binary;
  }

  /** The browser, or a failed test (required) or a skipped one (not required). */
  static HeadlessChromium findOrSkip() {
    String override = System.getenv("PARAPET_CHROMIUM");
    List<String> candidates = new ArrayList<>();
    if (override != null && !override.isBlank()) {
      candidates.add(override);
    }
    candidates.addAll(CANDIDATES);
    for (String c : candidates) {
      Path p = Path.of(c);
      if (Files.isExecutable(p)) {
        return new HeadlessChromium(p);
      }
    }
    String message =
        "chromium : not found at "
            + candidates
            + " (expected: the Debian package chromium; bin/test installs it with apt-get when"
            + " running as root, or set PARAPET_CHROMIUM to a Chromium binary)";
    if ("1".equals(System.getenv("PARAPET_REQUIRE_BROWSER"))) {
      fail(message + "; PARAPET_REQUIRE_BROWSER=1, so a missing browser is a failure");
    }
    Assumptions.abort(message + "; skipped because PARAPET_REQUIRE_BROWSER is not 1");
    throw new AssertionError("unreachable");
  }

  /**
   * Loads {@code url}, lets its scripts run for {@code budgetMillis} of virtual time, dumps DOM.
   */
  String dumpDom(String url, int budgetMillis) throws IOException, InterruptedException {
    Path profile = Files.createTempDirectory("parapet-chromium-");
    Path out = Files.createTempFile("parapet-dom-", ".html");
    Path err = Files.createTempFile("parapet-chromium-", ".log");
    try {
      Process p =
          new ProcessBuilder(
                  binary.toString(),
                  "--headless",
                  "--no-sandbox",
                  "--disable-gpu",
                  "--disable-quic",
                  "--no-first-run",
                  "--disable-background-networking",
                  "--disable-component-update",
                  "--disable-sync",
                  "--disable-dev-shm-usage",
                  "--user-data-dir=" + profile,
                  "--window-size=1280,1024",
                  "--virtual-time-budget=" + budgetMillis,
                  "--dump-dom",
                  url)
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .start();
      if (!p.waitFor(90, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        fail(
            "chromium : still running after 90 s (expected: exit after --dump-dom); log: "
                + tail(err));
      }
      String dom = Files.readString(out, StandardCharsets.UTF_8);
      if (p.exitValue() != 0 || dom.isBlank()) {
        fail(
            "chromium : exit "
                + p.exitValue()
                + ", "
                + dom.length()
                + " bytes of DOM (expected: 0 and a page); log: "
                + tail(err));
      }
      return dom;
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
      deleteTree(profile);
    }
  }

  private static String tail(Path log) throws IOException {
    String s = Files.readString(log, StandardCharsets.UTF_8);
    return s.length() > 2000 ? s.substring(s.length() - 2000) : s;
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
