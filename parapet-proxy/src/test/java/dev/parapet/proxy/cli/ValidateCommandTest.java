package dev.parapet.proxy.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.testing.TestCertificates;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ValidateCommandTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return new CommandLine(new ParapetCli())
        .setOut(new PrintWriter(out, true))
        .setErr(new PrintWriter(err, true))
        .execute(args);
  }

  @Test
  void validFileExitsZeroWithASummary() {
    Path file = Path.of("..", "examples", "connector.yaml");
    assertThat(run("validate", "-c", file.toString())).isZero();
    assertThat(out.toString())
        .isEqualTo(file + ": ok (2 routes, 2 origins)" + System.lineSeparator());
    assertThat(err.toString()).isEmpty();
  }

  @Test
  void warningsArePrintedButTheExitIsZero(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("warn.yaml");
    Files.writeString(
        file,
        """
        origins:
          api: {hosts: [127.0.0.1:9001], timeout: 10s}
        routes:
          - origin: api
            timeout: 8s
        """);
    assertThat(run("validate", "--config", file.toString())).isZero();
    assertThat(out.toString()).startsWith(file + ": ok (1 route, 1 origin)");
    assertThat(err.toString())
        .startsWith(
            file + ":5:14: warning: routes[0].timeout: origin 'api' timeout (10s) is not smaller");
  }

  @Test
  void badCertificatesAreReportedWithFileLineAndYamlPath(@TempDir Path dir) throws Exception {
    TestCertificates.Ca ca = TestCertificates.ca("Validate CA");
    ca.issue("a.test").write(dir, "a");
    ca.issue("b.test").write(dir, "b");
    java.time.Instant now = java.time.Instant.now();
    ca.issue(now.minusSeconds(86_400 * 3), now.minusSeconds(86_400), "old.test").write(dir, "old");
    Path file = dir.resolve("tls.yaml");
    Files.writeString(
        file,
        """
        tls:
          certificates:
            - {cert_file: a.pem, key_file: b-key.pem}
            - {cert_file: old.pem, key_file: old-key.pem}
            - {cert_file: gone.pem, key_file: a-key.pem}
        origins:
          api: {hosts: [127.0.0.1:9001]}
        routes:
          - origin: api
        """);
    assertThat(run("validate", "-c", file.toString())).isEqualTo(ValidateCommand.INVALID);
    assertThat(err.toString().lines())
        .anySatisfy(l ->
            assertThat(l)
                .startsWith(file + ":3:36: tls.certificates[0].key_file: ")
                .contains("does not match the certificate"))
        .anySatisfy(l ->
            assertThat(l)
                .startsWith(file + ":4:19: tls.certificates[1].cert_file: ")
                .contains("expired at"))
        .anySatisfy(l ->
            assertThat(l)
                .startsWith(file + ":5:19: tls.certificates[2].cert_file: ")
                .contains("gone.pem", "cannot be read"))
        .contains(file + ": invalid (3 errors)");
  }

  @Test
  void invalidFileExitsOneAndPrintsEveryErrorWithTheFileName(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("bad.yaml");
    Files.writeString(
        file,
        """
        origins:
          api:
            hosts: [127.0.0.1:9001]
            breaker: {failure_rate: 150%}
        routes:
          - origin: apii
        """);
    assertThat(run("validate", "-c", file.toString())).isEqualTo(1);
    assertThat(out.toString()).isEmpty();
    assertThat(err.toString().lines())
        .containsExactly(
            file + ":4:29: origins.api.breaker.failure_rate: must be in (0%, 100%], was 150%",
            file + ":6:13: routes[0].origin: unknown origin 'apii' (known: api)",
            file + ":2:3: warning: origins.api: not used by any route or fallback",
            file + ": invalid (2 errors)");
  }

  @Test
  void aReadTokenWithoutATokenFileIsRefusedAsRunRefusesIt(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("admin.yaml");
    Files.writeString(
        file,
        """
        admin: {read_token: required, hosts: [admin.internal]}
        origins:
          api: {hosts: [127.0.0.1:9001]}
        routes:
          - origin: api
        """);
    String refusal =
        file
            + ":1:21: admin.token_file: required when admin.read_token is required (was absent):"
            + " reads must carry the bearer token this file holds";
    assertThat(run("validate", "-c", file.toString())).isEqualTo(1);
    assertThat(err.toString().lines()).containsExactly(refusal, file + ": invalid (1 error)");
    err.getBuffer().setLength(0);
    assertThat(run("run", "-c", file.toString())).isEqualTo(1);
    assertThat(err.toString().lines())
        .containsExactly(refusal, file + ": invalid (1 error)", file + ": not started");
  }

  @Test
  void missingOrUnreadableFileExitsTwo(@TempDir Path dir) {
    Path missing = dir.resolve("nope.yaml");
    assertThat(run("validate", "-c", missing.toString())).isEqualTo(2);
    assertThat(err.toString())
        .isEqualTo(missing + ": cannot read: no such file" + System.lineSeparator());
    err.getBuffer().setLength(0);
    assertThat(run("validate", "-c", dir.toString())).isEqualTo(2);
    assertThat(err.toString()).contains("is a directory");
  }

  @Test
  void aFileThatIsNotUtf8ExitsTwo(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("binary.yaml");
    Files.write(file, new byte[] {(byte) 0xff, (byte) 0xfe, 'a', ':', ' ', '1'});
    assertThat(run("validate", "-c", file.toString())).isEqualTo(2);
    assertThat(err.toString())
        .isEqualTo(file + ": cannot read: not UTF-8 text" + System.lineSeparator());
  }

  @Test
  void theFileOptionIsRequired() {
    assertThat(run("validate")).isEqualTo(2);
    assertThat(err.toString()).contains("Missing required option: '--config=FILE'");
    assertThat(ParapetCli.execute("validate", "--help")).isZero();
  }
}
