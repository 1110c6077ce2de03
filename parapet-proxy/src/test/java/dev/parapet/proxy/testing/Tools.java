package dev.parapet.proxy.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Command-line clients the tests drive (curl, openssl s_client): found on the PATH; a test that
 * needs a missing one is skipped — or fails, when {@code bin/test} installed it and set {@code
 * PARAPET_REQUIRE_CURL} or {@code PARAPET_REQUIRE_OPENSSL}.
 */
public final class Tools {
  private Tools() {}

  /** What a command printed (standard output and error together) and its exit status. */
  public record Run(int exit, String output) {}

  /** Skips (or fails) the calling test unless {@code command} is on the PATH. */
  public static void require(String command) {
    boolean found = false;
    String path = System.getenv("PATH");
    if (path != null) {
      for (String d : path.split(File.pathSeparator)) {
        if (Files.isExecutable(Path.of(d, command))) {
          found = true;
        }
      }
    }
    if (System.getenv("PARAPET_REQUIRE_" + command.toUpperCase(java.util.Locale.ROOT)) != null) {
      assertThat(found).as(command + " on the PATH").isTrue();
    }
    Assumptions.assumeTrue(found, command + " is not installed");
  }

  /** Runs {@code command} with empty standard input, for at most 30 s. */
  public static Run run(List<String> command) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(command + " did not finish in 30 s");
    }
    return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
  }
}
