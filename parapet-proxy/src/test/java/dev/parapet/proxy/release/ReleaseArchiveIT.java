package dev.parapet.proxy.release;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import dev.parapet.proxy.testing.TestCertificates;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release archive {@code mvn package} builds ({@code target/parapet-VERSION.tar.gz}), unpacked
 * into a temporary directory and run from there the way a person would after downloading it: no
 * Maven on {@code PATH}, no repository around, no {@code java} on {@code PATH} either — the
 * launcher finds the Java runtime through {@code JAVA_HOME}. Runs in the integration-test phase
 * (maven-failsafe), after the archive exists.
 */
class ReleaseArchiveIT {
  private static final String VERSION = System.getProperty("parapet.version", "");
  private static final Path TARGET = Path.of(System.getProperty("parapet.target", "target"));

  @TempDir static Path tmp;
  private static Path home;
  private static Path bin;

  @BeforeAll
  static void unpack() throws Exception {
    assertThat(VERSION).as("system property parapet.version (set by the pom)").isNotBlank();
    Path archive = TARGET.resolve("parapet-" + VERSION + ".tar.gz");
    assertThat(archive).as("the release archive").isRegularFile();
    run(List.of("tar", "-xzf", archive.toString(), "-C", tmp.toString()), tmp, Map.of(), 0);
    home = tmp.resolve("parapet-" + VERSION);
    // No key made on the building machine by bin/dev-certs travels in the archive.
    assertThat(home.resolve("examples/certs")).doesNotExist();
    // A PATH with the launcher's shell tools only: neither mvn nor java is reachable through it.
    bin = Files.createDirectories(tmp.resolve("path"));
    for (String tool : List.of("bash", "env", "dirname", "readlink", "grep", "head", "sed")) {
      Path real = which(tool);
      Files.createSymbolicLink(bin.resolve(tool), real);
    }
  }

  @Test
  void holdsTheLauncherTheJarTheExamplesAndTheDocs() {
    assertThat(home.resolve("bin/parapet")).isExecutable();
    assertThat(home.resolve("bin/dev-certs")).isExecutable();
    assertThat(home.resolve("lib/parapet.jar")).isRegularFile();
    assertThat(home.resolve("README.md")).isRegularFile();
    assertThat(home.resolve("docs/proxy.md")).isRegularFile();
    assertThat(home.resolve("examples/connector.yaml")).isRegularFile();
    assertThat(home.resolve("examples/prometheus/parapet-alerts.yml")).isRegularFile();
    assertThat(home.resolve("examples/grafana/parapet.json")).isRegularFile();
    assertThat(home.resolve("examples/systemd/parapet.service")).isRegularFile();
  }

  @Test
  void versionIsTheOneMavenBuilt() throws Exception {
    String out = launch(0, "--version");
    assertThat(out.strip()).isEqualTo("parapet " + VERSION);
  }

  @Test
  void validatesTheExamplesAndRefusesABrokenFile() throws Exception {
    // docker/parapet.yaml is the configuration the container image starts with; edge.yaml's HTTPS
    // listener reads the certificate bin/dev-certs makes (made here without openssl).
    Path certs = Files.createDirectories(home.resolve("examples/certs"));
    TestCertificates.ca("dev CA").issue("edge.test", "localhost").write(certs, "edge");
    for (String example : List.of("connector", "edge", "shield", "docker/parapet")) {
      assertThat(launch(0, "validate", "-c", "examples/" + example + ".yaml"))
          .contains("examples/" + example + ".yaml: ok");
    }
    Path broken = tmp.resolve("broken.yaml");
    Files.writeString(broken, "listen: nowhere\n", StandardCharsets.UTF_8);
    assertThat(launch(1, "validate", "-c", broken.toString()))
        .contains("listen: must be host:port");
  }

  @Test
  void saysWhatIsMissingWithoutAJava() throws Exception {
    String out =
        run(
            List.of(home.resolve("bin/parapet").toString(), "--version"),
            home,
            Map.of("PATH", bin.toString(), "JAVA_HOME", tmp.resolve("no-such-jdk").toString()),
            -1);
    // Either a Java >= 21 under /usr/lib/jvm answered, or the launcher said none was found.
    assertThat(out).containsAnyOf("parapet " + VERSION, "no Java >= 21 found");
    assertThat(out).contains("is not a Java >= 21");
  }

  @Test
  void theSystemdUnitVerifies() throws Exception {
    Path analyze = Path.of("/usr/bin/systemd-analyze");
    if (!Files.isExecutable(analyze)) {
      String message = "systemd-analyze : not in /usr/bin (expected: the Debian package systemd)";
      if ("1".equals(System.getenv("PARAPET_REQUIRE_SYSTEMD_ANALYZE"))) {
        fail(message + "; PARAPET_REQUIRE_SYSTEMD_ANALYZE=1, so a missing one is a failure");
      }
      Assumptions.abort(message + "; skipped because PARAPET_REQUIRE_SYSTEMD_ANALYZE is not 1");
    }
    // The unit as installed, but pointing at this unpacked archive: verify checks that the
    // commands it runs exist and are executable.
    String unit = Files.readString(home.resolve("examples/systemd/parapet.service"));
    assertThat(unit).contains("ExecReload=/bin/kill -HUP $MAINPID").contains("KillSignal=SIGTERM");
    Path installed = tmp.resolve("parapet.service");
    Files.writeString(installed, unit.replace("/opt/parapet", home.toString()));
    String out = run(List.of(analyze.toString(), "verify", installed.toString()), tmp, Map.of(), 0);
    // verify exits 0 on unknown keys and bad assignments too, and only prints them.
    assertThat(out).as("systemd-analyze verify output").doesNotContain(installed.toString());
  }

  @Test
  void sighupReloadsTheFileAndSigtermStopsCleanly() throws Exception {
    int listen = freePort();
    int admin = freePort();
    int origin = freePort();
    Path config = tmp.resolve("signals.yaml");
    String base =
        "name: signals\n"
            + "listen: 127.0.0.1:"
            + listen
            + "\n"
            + "admin: {listen: 127.0.0.1:"
            + admin
            + "}\n"
            + "origins:\n"
            + "  api: {hosts: [127.0.0.1:"
            + origin
            + "], timeout: 2s}\n";
    Files.writeString(config, base + "routes:\n  - {match: {prefix: /}, origin: api}\n");
    Path log = tmp.resolve("run.log");
    ProcessBuilder pb =
        new ProcessBuilder(home.resolve("bin/parapet").toString(), "run", "-c", config.toString())
            .directory(home.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    pb.environment().clear();
    pb.environment()
        .putAll(Map.of("PATH", bin.toString(), "JAVA_HOME", System.getProperty("java.home")));
    Process p = pb.start();
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Files.readString(log).contains("listening on"));
      assertThat(origins(admin)).contains("\"api\"").doesNotContain("\"web\"");

      Files.writeString(
          config,
          base
              + "  web: {hosts: [127.0.0.1:"
              + origin
              + "], timeout: 2s}\n"
              + "routes:\n"
              + "  - {match: {prefix: /web/}, origin: web}\n"
              + "  - {match: {prefix: /}, origin: api}\n");
      run(List.of("/bin/kill", "-HUP", Long.toString(p.pid())), tmp, Map.of(), 0);
      await().atMost(Duration.ofSeconds(60)).until(() -> origins(admin).contains("\"web\""));
      assertThat(p.isAlive()).as("alive after SIGHUP; log:%n%s", Files.readString(log)).isTrue();
    } finally {
      p.destroy(); // SIGTERM
    }
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("stopped within 60 s of SIGTERM").isTrue();
    // 0: SIGTERM is handled by the proxy, which exits normally once the drain and the close ran.
    assertThat(p.exitValue()).as("exit status; log:%n%s", Files.readString(log)).isZero();
    assertThat(Files.readString(log)).doesNotContain("requests in flight after a drain");
  }

  private static String origins(int adminPort) throws IOException, InterruptedException {
    try (HttpClient c = HttpClient.newHttpClient()) {
      return c.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/admin/origins"))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (IOException e) {
      return "";
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static String launch(int expectedExit, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(home.resolve("bin/parapet").toString());
    cmd.addAll(List.of(args));
    return run(
        cmd,
        home,
        Map.of("PATH", bin.toString(), "JAVA_HOME", System.getProperty("java.home")),
        expectedExit);
  }

  /** Runs {@code cmd} in {@code dir} with exactly {@code env}; -1 accepts any exit code. */
  private static String run(List<String> cmd, Path dir, Map<String, String> env, int expectedExit)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile(tmp, "out", ".txt");
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    if (!env.isEmpty()) {
      pb.environment().clear();
      pb.environment().putAll(env);
    }
    Process p = pb.start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail(cmd + " : still running after 120 s");
    }
    String out = Files.readString(log, StandardCharsets.UTF_8);
    if (expectedExit >= 0) {
      assertThat(p.exitValue())
          .as("exit code of %s; output:%n%s", cmd, out)
          .isEqualTo(expectedExit);
    }
    return out;
  }

  private static Path which(String tool) {
    for (String dir : List.of("/usr/bin", "/bin", "/usr/local/bin")) {
      Path p = Path.of(dir, tool);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    throw new IllegalStateException(tool + " : not found in /usr/bin, /bin, /usr/local/bin");
  }
}
