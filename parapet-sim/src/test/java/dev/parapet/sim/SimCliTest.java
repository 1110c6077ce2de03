package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimCliTest {
  @TempDir Path dir;

  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return SimCli.execute(args, new PrintWriter(out), new PrintWriter(err));
  }

  @Test
  void listShowsEveryBuiltInScenario() {
    assertThat(run("list")).isZero();
    assertThat(out.toString())
        .contains("retry-storm", "slow-origin", "synchronized-probes", "tiered-timeouts");
  }

  @Test
  void runPrintsTheSummaryAndWritesOneCsvPerVariant() throws Exception {
    Path csv = dir.resolve("csv");
    assertThat(run("run", "retry-storm", "--seed", "3", "--scale", "0.05", "--csv", csv.toString()))
        .isZero();
    assertThat(out.toString()).contains("scenario retry-storm (seed 3)", "amplification (fault)");
    // Two CSV files and, by default, the HTML report beside them.
    assertThat(Files.list(csv)).hasSize(3);
    assertThat(csv.resolve("retry-storm.html")).exists();
    assertThat(out.toString()).contains("wrote " + csv.resolve("retry-storm.html"));
    assertThat(err.toString()).contains("s CPU");
  }

  @Test
  void sweepPrintsOneRowPerValueAndRefusesAParameterTheVariantLacks() throws Exception {
    Path html = dir.resolve("sweep.html");
    assertThat(
            run(
                "sweep",
                "retry-storm",
                "--param",
                "budget_ratio",
                "--values",
                "0.1,0.3",
                "--seeds",
                "2",
                "--scale",
                "0.05",
                "--html",
                html.toString()))
        .isZero();
    assertThat(out.toString())
        .contains("sweep budget_ratio", "seeds 1..2", "10%", "30%", "wrote " + html);
    assertThat(HtmlReportTest.parse(Files.readString(html)).getDocumentElement().getLocalName())
        .isEqualTo("html");
    assertThat(
            run(
                "sweep",
                "retry-storm",
                "--param",
                "open_duration",
                "--variant",
                "naive retry",
                "--scale",
                "0.05"))
        .isEqualTo(2);
    assertThat(err.toString())
        .contains("--param open_duration : variant 'naive retry' has no breaker");
  }

  @Test
  void runWritesTheHtmlReportAndAStandaloneChartWhereAsked() throws Exception {
    Path html = dir.resolve("out/report.html");
    Path svg = dir.resolve("img/chart.svg");
    assertThat(
            run(
                "run",
                "retry-storm",
                "--scale",
                "0.05",
                "--html",
                html.toString(),
                "--chart",
                svg.toString()))
        .isZero();
    assertThat(HtmlReportTest.parse(Files.readString(html)).getDocumentElement().getLocalName())
        .isEqualTo("html");
    assertThat(HtmlReportTest.parse(Files.readString(svg)).getDocumentElement().getLocalName())
        .isEqualTo("svg");
  }

  @Test
  void runAcceptsAYamlFileAndRejectsUnknownNames() throws Exception {
    Path f = dir.resolve("s.yaml");
    Files.writeString(f, ScenarioFileTest.VALID);
    assertThat(run("run", f.toString())).isZero();
    assertThat(out.toString()).contains("scenario my-api");
    assertThat(run("run", "no-such-scenario")).isEqualTo(2);
    assertThat(err.toString()).contains("scenario : no-such-scenario (expected: one of");
  }

  @Test
  void replayReadsALogAndAPolicy() throws Exception {
    Path log = dir.resolve("access.log");
    Files.writeString(log, dev.parapet.sim.replay.ReplayLogs.csvLog());
    Path policy = dir.resolve("p.yaml");
    Files.writeString(policy, "breaker: {failure_rate: 20%}\n");
    Path html = dir.resolve("replay.html");
    assertThat(
            run("replay", log.toString(), "--policy", policy.toString(), "--html", html.toString()))
        .isZero();
    assertThat(out.toString()).contains("/api", "would reject", "wrote " + html);
    assertThat(Files.readString(html)).contains("route /api", "<svg");
    Files.writeString(policy, "breaker: {failure_rate: 200%}\n");
    assertThat(run("replay", log.toString(), "--policy", policy.toString())).isEqualTo(2);
    assertThat(err.toString()).contains("breaker.failure_rate: must be in");
  }

  @Test
  void replayComparesPoliciesAndSweepsInOneRead() throws Exception {
    Path log = dir.resolve("access.log.gz");
    try (var z = new java.util.zip.GZIPOutputStream(Files.newOutputStream(log))) {
      z.write(
          dev.parapet.sim.replay.ReplayLogs.csvLog()
              .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    Path a = dir.resolve("a.yaml");
    Files.writeString(a, "breaker: {failure_rate: 50%}\n");
    Path b = dir.resolve("b.yaml");
    Files.writeString(b, "failure_rate: 20%\n");
    assertThat(run("replay", log.toString(), "--policy", a.toString(), "--policy", b.toString()))
        .isZero();
    assertThat(out.toString())
        .contains(
            "policy a.yaml: ", "policy b.yaml: ", "failureRate=0.2", "would reject while healthy");
    assertThat(err.toString()).contains("replayed 8001 lines");
    out.getBuffer().setLength(0);
    assertThat(
            run(
                "replay",
                log.toString(),
                "--policy",
                a.toString(),
                "--sweep",
                "min_requests=100,400"))
        .isZero();
    assertThat(out.toString())
        .contains(
            "policy min_requests=100: ",
            "minRequests=100",
            "policy min_requests=400: ",
            "minRequests=400");
    assertThat(run("replay", log.toString(), "--sweep", "failure_rate=150%")).isEqualTo(2);
    assertThat(err.toString()).contains("failure_rate=150%");
    assertThat(run("replay", log.toString(), "--window", "soon")).isEqualTo(2);
    assertThat(err.toString()).contains("--window : soon (expected: 5s, 500ms, 2m)");
    assertThat(run("replay", log.toString(), "--policy", dir.resolve("none.yaml").toString()))
        .isEqualTo(2);
    assertThat(err.toString()).contains("none.yaml (expected: a readable YAML file)");
    byte[] whole = Files.readAllBytes(log);
    Path truncated = dir.resolve("truncated.log.gz");
    Files.write(truncated, java.util.Arrays.copyOf(whole, whole.length / 2));
    assertThat(run("replay", truncated.toString())).isEqualTo(2);
    assertThat(err.toString()).contains("truncated.log.gz : ", "(expected: a complete log; read ");
    assertThat(run("replay", log.toString(), "--format", "apache")).isEqualTo(2);
    assertThat(err.toString())
        .contains("--format : apache (expected: auto, csv, json, nginx or envoy)");
  }
}
