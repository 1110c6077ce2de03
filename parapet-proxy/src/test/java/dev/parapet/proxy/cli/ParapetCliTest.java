package dev.parapet.proxy.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ParapetCliTest {

  @Test
  void versionAndHelpExitZeroAndUnknownCommandsDoNot() {
    assertThat(ParapetCli.execute("--version")).isZero();
    assertThat(ParapetCli.execute("--help")).isZero();
    assertThat(ParapetCli.execute("no-such-command")).isNotZero();
  }

  @Test
  void versionIsTheProjectVersionMavenFilledIn() {
    StringWriter out = new StringWriter();
    int code =
        new CommandLine(new ParapetCli()).setOut(new PrintWriter(out, true)).execute("--version");
    assertThat(code).isZero();
    // The pom's version, not a placeholder left unfiltered (ReleaseArchiveIT compares it with the
    // version of the archive Maven built).
    assertThat(out.toString().strip()).matches("parapet \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
  }

  @Test
  void runRefusesAnUnknownTransportBeforeStartingAnything() {
    StringWriter err = new StringWriter();
    StringWriter out = new StringWriter();
    Path config = Path.of("../examples/edge.yaml").toAbsolutePath().normalize();
    int code =
        new CommandLine(new ParapetCli())
            .setOut(new PrintWriter(out, true))
            .setErr(new PrintWriter(err, true))
            .execute("run", "-c", config.toString(), "--transport", "kqueue");
    assertThat(code).isEqualTo(ValidateCommand.INVALID);
    assertThat(err.toString())
        .contains(
            "--transport: unknown transport 'kqueue' (expected one of [auto, epoll, io_uring, nio])");
    assertThat(out.toString()).doesNotContain("listening");
  }

  @Test
  void runNamesTheTransportOptionInItsHelp() {
    StringWriter out = new StringWriter();
    int code =
        new CommandLine(new ParapetCli())
            .setOut(new PrintWriter(out, true))
            .execute("run", "--help");
    assertThat(code).isZero();
    assertThat(out.toString()).contains("--transport=NAME").contains("epoll, io_uring");
  }
}
