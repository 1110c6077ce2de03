package dev.parapet.proxy.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.Mode;
import dev.parapet.proxy.cli.ParapetCli;
import dev.parapet.proxy.faultorigin.FaultOrigin;
import dev.parapet.proxy.faultorigin.FaultOriginSettings;
import dev.parapet.proxy.faultorigin.Latency;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code parapet demo} end to end in its short mode, headless: both runs happen, the summary is
 * printed, and enforcing breakers spare the sick origin attempts that shadow mode makes.
 */
class DemoCommandTest {

  @Test
  void shortDemoPrintsTheSummaryOfBothRuns() {
    DemoCommand demo = new DemoCommand();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = new CommandLine(demo);
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));

    int code = cl.execute("--duration", "8s", "--rate", "100", "--no-browser");

    assertThat(code).as("exit code; stderr: %s", err).isZero();
    String text = out.toString();
    assertThat(text)
        .contains("/dashboard")
        .contains("summary")
        .contains("shadow (unprotected)")
        .contains("enforced")
        .contains("origin attempts / offered (API)")
        .contains("user success rate (fresh + stale)")
        .contains("healthy route (/static/) ok")
        .contains("healthy route p99: healthy phase / all")
        .contains("time to open")
        .contains("fast-fail p99")
        .contains("recovery time")
        .doesNotContain("\r"); // not a terminal: plain lines, no redrawn progress line
    Demo.Report report = demo.report();
    assertThat(report).isNotNull();
    RunResult shadow = report.shadow();
    RunResult enforced = report.enforced();
    assertThat(shadow.mode()).isEqualTo(Mode.SHADOW);
    assertThat(enforced.mode()).isEqualTo(Mode.ENFORCE);
    // Same timeline, same load.
    assertThat(enforced.offeredApi()).isEqualTo(shadow.offeredApi()).isPositive();
    // Shadow mode rejects nothing: every API request the edge cache cannot answer (1 s TTL) is
    // tried on the origin, and no breaker answers.
    assertThat(shadow.apiAttempts()).isPositive();
    assertThat(shadow.fastFails()).isZero();
    // Enforcing, something other than the origin answers while it is down (a stale copy from the
    // edge cache, or an open breaker's fast 503). How many origin attempts that spares is the
    // cascade benchmark's to measure: in 8 s on a loaded machine the breaker may open late or not
    // at all, and the counts then say more about the host than about the protection.
    assertThat(enforced.fastFails() + enforced.stale()).isPositive();
    // The healthy route kept answering in both runs.
    assertThat(shadow.succeeded()).isGreaterThanOrEqualTo(shadow.offered() - shadow.offeredApi());
  }

  @Test
  void isASubcommandOfParapet() {
    assertThat(ParapetCli.execute("demo", "--help")).isZero();
    assertThat(ParapetCli.execute("demo", "--duration", "1s")).isEqualTo(2);
    assertThat(ParapetCli.execute("demo", "--rate", "0")).isEqualTo(2);
    assertThat(ParapetCli.execute("demo", "--api-down", "teapot")).isEqualTo(2);
  }

  @Test
  void apiDownHangsThenRefusesByDefault() {
    DemoCommand demo = new DemoCommand();
    new CommandLine(demo).parseArgs("--no-browser");

    Timeline timeline = demo.options().timeline();

    assertThat(timeline.phases())
        .extracting(Timeline.Phase::name)
        .containsExactly(
            Timeline.HEALTHY, Timeline.BROWNOUT, Timeline.HANG, Timeline.REFUSE, Timeline.RECOVERY);
    assertThat(timeline.phase(Timeline.HANG).plan().behaviour().hangRate()).isEqualTo(1.0);
    assertThat(timeline.phase(Timeline.REFUSE).plan().refuse()).isTrue();
  }

  /** {@code --api-down 503}: the API origin's down phases answer 503 at once, listening. */
  @Test
  void apiDown503MakesTheOriginAnswer503AtOnceWhileDown() throws Exception {
    DemoCommand demo = new DemoCommand();
    new CommandLine(demo).parseArgs("--api-down", "503", "--no-browser");

    Timeline timeline = demo.options().timeline();

    assertThat(timeline.phases())
        .extracting(Timeline.Phase::name)
        .containsExactly(Timeline.HEALTHY, Timeline.BROWNOUT, Timeline.DOWN_503, Timeline.RECOVERY);
    Timeline.Phase down = timeline.phase(Timeline.DOWN_503);
    // the same span of the run as the default's hang and refusal together
    assertThat(down.from()).isEqualTo(0.5);
    assertThat(down.to()).isEqualTo(0.75);
    assertThat(down.outage()).isTrue();
    assertThat(down.plan().refuse()).isFalse();
    assertThat(down.plan().behaviour().latency()).isEqualTo(Latency.NONE);
    // what the demo's API origin does with that plan in force
    try (FaultOrigin api = FaultOrigin.start(FaultOriginSettings.loopback(), down.plan());
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      for (int i = 0; i < 3; i++) {
        HttpResponse<Void> r =
            client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/api/" + i))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.discarding());
        assertThat(r.statusCode()).isEqualTo(503);
      }
    }
  }
}
