package dev.parapet.proxy.faultorigin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class FaultPlanJsonTest {

  private static final FaultPlan RICH =
      FaultPlan.of(
              Behaviour.builder()
                  .status(203)
                  .bodySize(77)
                  .cacheControl("max-age=5")
                  .etag("W/\"x\"")
                  .latency(Latency.parse("latency", "bimodal:90%:20ms,2s"))
                  .errorRate(0.1)
                  .errorStatus(429)
                  .resetRate(0.05)
                  .midBodyResetRate(0.025)
                  .hangRate(0.01)
                  .garbageRate(0.005)
                  .build())
          .withPaths(Map.of("/slow/", Behaviour.builder().latency(new Latency.Fixed(5)).build()))
          .withRefuse(true)
          .withHealth(Health.DOWN);

  @Test
  void writtenPlansReadBackEqual() {
    String json = FaultPlanJson.write(RICH);

    assertThat(FaultPlanJson.update(FaultPlan.DEFAULT, json)).isEqualTo(RICH);
    assertThat(json)
        .contains("\"error_rate\" : \"10%\"")
        .contains("\"mid_body_reset_rate\" : \"2.5%\"");
  }

  @Test
  void partialUpdatesKeepEverythingElse() {
    FaultPlan updated = FaultPlanJson.update(RICH, "{\"status\": 500, \"hang_rate\": 0.02}");

    assertThat(updated.behaviour().status()).isEqualTo(500);
    assertThat(updated.behaviour().hangRate()).isEqualTo(0.02);
    assertThat(updated.behaviour().toBuilder().status(203).hangRate(0.01).build())
        .isEqualTo(RICH.behaviour());
    assertThat(updated.paths()).isEqualTo(RICH.paths());
    assertThat(updated.health()).isEqualTo(Health.DOWN);
  }

  @Test
  void pathOverridesInheritTheUpdatedTopLevelAndNullClearsThem() {
    FaultPlan updated =
        FaultPlanJson.update(
            FaultPlan.DEFAULT,
            "{\"status\": 201, \"paths\": {\"/api/\": {\"error_rate\": \"50%\"}}}");

    Behaviour api = updated.behaviourFor("/api/x");
    assertThat(api.status()).isEqualTo(201);
    assertThat(api.errorRate()).isEqualTo(0.5);
    assertThat(updated.behaviourFor("/other").errorRate()).isZero();
    assertThat(FaultPlanJson.update(updated, "{\"paths\": null}").paths()).isEmpty();
  }

  @Test
  void errorsSayWhatWasExpectedAndWhatWasFound() {
    assertThatThrownBy(() -> FaultPlanJson.update(FaultPlan.DEFAULT, "{\"status\": \"ok\"}"))
        .hasMessage("status: expected an integer, found the string 'ok'");
    assertThatThrownBy(() -> FaultPlanJson.update(FaultPlan.DEFAULT, "{\"status\": 99}"))
        .hasMessage("status: expected an HTTP status in [200, 599], found 99");
    assertThatThrownBy(() -> FaultPlanJson.update(FaultPlan.DEFAULT, "{\"latency\": \"slow\"}"))
        .hasMessageStartingWith("latency: expected none | fixed:DELAY")
        .hasMessageEndingWith("found 'slow'");
    assertThatThrownBy(() ->
            FaultPlanJson.update(FaultPlan.DEFAULT, "{\"paths\": {\"/a/\": {\"body_size\": -1}}}"))
        .hasMessage("paths./a/.body_size: expected a byte count in [0, 1073741824], found -1");
    assertThatThrownBy(() -> FaultPlanJson.update(FaultPlan.DEFAULT, "{\"paths\": {\"a\": {}}}"))
        .hasMessage("paths: expected path prefixes starting with /, found 'a'");
    assertThatThrownBy(() ->
            FaultPlanJson.update(
                FaultPlan.DEFAULT, "{\"error_rate\": \"60%\", \"hang_rate\": \"50%\"}"))
        .hasMessageContaining("expected a sum <= 100%, found 110%");
    assertThatThrownBy(() -> FaultPlanJson.update(FaultPlan.DEFAULT, ""))
        .hasMessage("request body: expected a JSON object, found an empty body");
    assertThatThrownBy(() -> FaultPlanJson.update(FaultPlan.DEFAULT, "{} {}"))
        .hasMessageStartingWith("request body: expected a JSON object, found invalid JSON");
    assertThatThrownBy(() -> FaultPlanJson.update(FaultPlan.DEFAULT, "{\"refuse\": \"yes\"}"))
        .hasMessage("refuse: expected true or false, found the string 'yes'");
    assertThatThrownBy(() -> FaultPlanJson.update(FaultPlan.DEFAULT, "{\"etag\": \"v1\"}"))
        .hasMessage("etag: expected a quoted entity tag such as \"v1\", found 'v1'");
  }
}
