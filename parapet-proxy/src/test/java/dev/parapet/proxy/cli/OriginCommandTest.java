package dev.parapet.proxy.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.faultorigin.Behaviour;
import dev.parapet.proxy.faultorigin.FaultOriginSettings;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.faultorigin.Health;
import dev.parapet.proxy.faultorigin.Latency;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class OriginCommandTest {

  private static OriginCommand parse(String... args) {
    OriginCommand command = new OriginCommand();
    new CommandLine(command).parseArgs(args);
    return command;
  }

  @Test
  void flagsBecomeTheStartingPlan() {
    FaultPlan plan =
        parse(
                "--status",
                "202",
                "--body-size",
                "4096",
                "--cache-control",
                "max-age=60",
                "--etag",
                "\"v7\"",
                "--latency",
                "lognormal:120ms,4s",
                "--error-rate",
                "30%",
                "--error-status",
                "502",
                "--reset-rate",
                "5%",
                "--mid-body-reset-rate",
                "1%",
                "--hang-rate",
                "2%",
                "--garbage-rate",
                "0.5%",
                "--refuse",
                "--health",
                "up")
            .plan();

    assertThat(plan.behaviour())
        .isEqualTo(
            Behaviour.builder()
                .status(202)
                .bodySize(4096)
                .cacheControl("max-age=60")
                .etag("\"v7\"")
                .latency(new Latency.LogNormal(120_000_000L, 4_000_000_000L))
                .errorRate(0.3)
                .errorStatus(502)
                .resetRate(0.05)
                .midBodyResetRate(0.01)
                .hangRate(0.02)
                .garbageRate(0.005)
                .build());
    assertThat(plan.refuse()).isTrue();
    assertThat(plan.health()).isEqualTo(Health.UP);
    assertThat(plan.paths()).isEmpty();
  }

  @Test
  void noFlagsMeanTheDefaultPlanOnPort9001WithControlOn10001() {
    OriginCommand command = parse();

    assertThat(command.plan()).isEqualTo(FaultPlan.DEFAULT);
    FaultOriginSettings settings = command.settings();
    assertThat(settings.port()).isEqualTo(9001);
    assertThat(settings.controlPort()).isEqualTo(10001);
    assertThat(settings.bind().getHostAddress()).isEqualTo("127.0.0.1");
    assertThat(settings.seed()).isNull();
  }

  @Test
  void ephemeralPortMeansEphemeralControlPortUnlessGiven() {
    assertThat(parse("--port", "0").settings().controlPort()).isZero();
    assertThat(parse("--port", "0", "--control-port", "7000").settings().controlPort())
        .isEqualTo(7000);
    assertThat(parse("--seed", "42").settings().seed()).isEqualTo(42L);
  }

  @Test
  void invalidFlagsExitWith2AndSayWhatExpectedAndFound() {
    assertFails(
        "--latency: expected none | fixed:DELAY | uniform:MIN-MAX | lognormal:P50,P99 |"
            + " bimodal:FAST%:FAST,SLOW, found 'fixd:50ms'",
        "--latency", "fixd:50ms");
    assertFails(
        "--error-rate: expected a percentage in [0%, 100%], found '150%'", "--error-rate", "150%");
    assertFails(
        "--error-rate: expected a percentage such as 30%, found '30'", "--error-rate", "30");
    assertFails("--status: expected an HTTP status in [200, 599], found 700", "--status", "700");
    assertFails(
        "--error-rate + --reset-rate + --mid-body-reset-rate + --hang-rate + --garbage-rate:"
            + " expected a sum <= 100%, found 120%",
        "--error-rate", "60%", "--hang-rate", "60%");
    assertFails("--health: expected one of follow, up, down, found 'sick'", "--health", "sick");
    assertFails("--port: expected a port in [0, 65535], found 70000", "--port", "70000");
    assertFails(
        "--control-port: expected a port in [0, 65535] (defaults to --port + 1000), found 65536",
        "--port",
        "64536");
  }

  private static void assertFails(String message, String... flags) {
    StringWriter err = new StringWriter();
    String[] args = new String[flags.length + 1];
    args[0] = "origin";
    System.arraycopy(flags, 0, args, 1, flags.length);
    int code = new CommandLine(new ParapetCli()).setErr(new PrintWriter(err, true)).execute(args);

    assertThat(code).as("exit code for %s", String.join(" ", flags)).isEqualTo(2);
    assertThat(err.toString()).contains(message);
  }
}
