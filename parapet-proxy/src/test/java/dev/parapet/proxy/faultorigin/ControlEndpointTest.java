package dev.parapet.proxy.faultorigin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ControlEndpointTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private @Nullable FaultOrigin started;
  private HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void setUp() {
    NettyLeaks.watch();
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    started =
        FaultOrigin.start(
            FaultOriginSettings.loopback().withControlPort(0).withSeed(7L),
            FaultPlan.of(Behaviour.builder().bodySize(10).build()));
  }

  @AfterEach
  void tearDown() {
    client.shutdownNow();
    client.close();
    if (started != null) {
      started.close();
    }
  }

  @AfterAll
  static void noLeaks() {
    NettyLeaks.assertNone();
  }

  private FaultOrigin origin() {
    FaultOrigin o = started;
    assertThat(o).isNotNull();
    return o;
  }

  private HttpResponse<String> control(String method, String path, @Nullable String body)
      throws IOException, InterruptedException {
    URI uri = URI.create("http://127.0.0.1:" + origin().controlPort().orElseThrow() + path);
    HttpRequest.BodyPublisher publisher =
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body);
    return client.send(
        HttpRequest.newBuilder(uri)
            .method(method, publisher)
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private int originStatus(String path) throws IOException, InterruptedException {
    return client
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + origin().port() + path))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  @Test
  void getPlanShowsTheStartingPlan() throws Exception {
    HttpResponse<String> response = control("GET", "/plan", null);

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
    JsonNode plan = JSON.readTree(response.body());
    assertThat(plan.get("status").intValue()).isEqualTo(200);
    assertThat(plan.get("body_size").intValue()).isEqualTo(10);
    assertThat(plan.get("latency").textValue()).isEqualTo("none");
    assertThat(plan.get("error_rate").textValue()).isEqualTo("0%");
    assertThat(plan.get("refuse").booleanValue()).isFalse();
  }

  @Test
  void putPlanChangesOnlyTheGivenFieldsAndTheOriginFollows() throws Exception {
    HttpResponse<String> put =
        control("PUT", "/plan", "{\"status\": 404, \"latency\": \"fixed:10ms\"}");

    assertThat(put.statusCode()).isEqualTo(200);
    JsonNode plan = JSON.readTree(put.body());
    assertThat(plan.get("status").intValue()).isEqualTo(404);
    assertThat(plan.get("latency").textValue()).isEqualTo("fixed:10ms");
    assertThat(plan.get("body_size").intValue()).as("unchanged").isEqualTo(10);
    assertThat(originStatus("/")).isEqualTo(404);
    assertThat(JSON.readTree(control("GET", "/plan", null).body()).get("status").intValue())
        .isEqualTo(404);
  }

  @Test
  void resetPlanReturnsToTheStartingPlan() throws Exception {
    control("PUT", "/plan", "{\"error_rate\": \"100%\", \"error_status\": 502}");
    assertThat(originStatus("/")).isEqualTo(502);

    HttpResponse<String> reset = control("POST", "/plan/reset", null);

    assertThat(reset.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(reset.body()).get("error_rate").textValue()).isEqualTo("0%");
    assertThat(originStatus("/")).isEqualTo(200);
  }

  @Test
  void badJsonIs400WithWhatExpectedAndFound() throws Exception {
    HttpResponse<String> broken = control("PUT", "/plan", "{\"status\": ");
    HttpResponse<String> notObject = control("PUT", "/plan", "[1, 2]");
    HttpResponse<String> badRate = control("PUT", "/plan", "{\"error_rate\": \"150%\"}");
    HttpResponse<String> unknown = control("PUT", "/plan", "{\"colour\": \"red\"}");

    assertThat(broken.statusCode()).isEqualTo(400);
    assertThat(error(broken))
        .startsWith("request body: expected a JSON object, found invalid JSON at line 1");
    assertThat(error(notObject)).isEqualTo("request body: expected a JSON object, found an array");
    assertThat(error(badRate))
        .isEqualTo("error_rate: expected a percentage in [0%, 100%], found '150%'");
    assertThat(error(unknown)).startsWith("'colour': expected one of status, body_size");
    assertThat(origin().plan()).as("nothing applied").isEqualTo(origin().initialPlan());
  }

  @Test
  void refusingKeepsTheControlEndpointReachable() throws Exception {
    int port = origin().port();

    assertThat(control("PUT", "/plan", "{\"refuse\": true}").statusCode()).isEqualTo(200);
    assertThatThrownBy(() -> new Socket("127.0.0.1", port).close())
        .isInstanceOf(ConnectException.class);
    assertThat(control("GET", "/plan", null).statusCode()).isEqualTo(200);
    assertThat(control("PUT", "/plan", "{\"refuse\": false}").statusCode()).isEqualTo(200);
    assertThat(originStatus("/")).isEqualTo(200);
  }

  @Test
  void statsCountRequestsByOutcomeAndReset() throws Exception {
    originStatus("/a");
    originStatus("/healthz");
    control("PUT", "/plan", "{\"error_rate\": \"100%\"}");
    originStatus("/b");

    JsonNode stats = JSON.readTree(control("GET", "/stats", null).body());
    assertThat(stats.get("requests").longValue()).isEqualTo(3);
    assertThat(stats.get("health_checks").longValue()).isEqualTo(1);
    assertThat(stats.get("outcomes").get("ok").longValue()).isEqualTo(2);
    assertThat(stats.get("outcomes").get("error").longValue()).isEqualTo(1);
    assertThat(stats.get("outcomes").get("hang").longValue()).isZero();

    JsonNode reset = JSON.readTree(control("POST", "/stats/reset", null).body());
    assertThat(reset.get("requests").longValue()).isZero();
    assertThat(origin().stats().requests()).isZero();
  }

  @Test
  void unknownPathsAndMethodsAreRefusedWithJsonErrors() throws Exception {
    HttpResponse<String> missing = control("GET", "/nope", null);
    HttpResponse<String> wrongMethod = control("DELETE", "/plan", null);

    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(error(missing)).contains("/nope").contains("expected");
    assertThat(wrongMethod.statusCode()).isEqualTo(405);
    assertThat(wrongMethod.headers().firstValue("allow")).hasValue("GET, PUT, PATCH");
  }

  private static String error(HttpResponse<String> response) throws IOException {
    return JSON.readTree(response.body()).get("error").textValue();
  }
}
