package dev.parapet.proxy.admin;

import static dev.parapet.proxy.testing.ProxyFixture.ADMIN_TOKEN;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.proxy.faultorigin.FaultOrigin;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.upstream.OriginSettings;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The dashboard in a real headless Chromium: the page loads from the admin listener, its charts
 * draw, and a breaker opened in the proxy shows up on the page (in the table and the timeline).
 */
class DashboardBrowserTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @RegisterExtension final ProxyFixture fx = new ProxyFixture();
  private ProxyServer proxy;
  private AdminServer admin;

  @BeforeEach
  void start() throws Exception {
    FaultOrigin origin = fx.faultOrigin(FaultPlan.DEFAULT);
    proxy =
        fx.proxy()
            .name("edge-dash")
            .threads(1)
            .routes(route("api", "/api/", "api"))
            .origins(OriginSettings.defaults("api", List.of(origin.address())))
            .start();
    admin = fx.admin(proxy);
  }

  @Test
  void pageLoadsChartsDrawAndAnOpenedBreakerAppears() throws Exception {
    HeadlessChromium chromium = HeadlessChromium.findOrSkip();
    for (int i = 0; i < 20; i++) {
      assertThat(fx.get(proxy.port(), "/api/" + i).statusCode()).isEqualTo(200);
    }
    CircuitBreaker breaker = proxy.breakers().all().iterator().next();
    String key = breaker.key().toString();
    // A sample with the breaker still closed first, so the timeline has a before and an after.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> {
          JsonNode samples = samples();
          assertThat(samples).isNotEmpty();
          assertThat(samples.get(0).get("breakers").get(key).asText()).isEqualTo("CLOSED");
        });
    HttpResponse<String> opened =
        fx.call(
            admin,
            "POST",
            "/admin/breakers/" + URLEncoder.encode(key, StandardCharsets.UTF_8) + "/open",
            ADMIN_TOKEN);
    assertThat(opened.statusCode()).isEqualTo(200);
    assertThat(fx.get(proxy.port(), "/api/x").statusCode()).isEqualTo(503);
    // The sampler runs once a second; wait until a sample has seen the forced-open breaker.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> {
          JsonNode d = JSON.readTree(fx.get(admin.port(), "/admin/dashboard.json").body());
          JsonNode last = d.get("samples").get(d.get("samples").size() - 1);
          assertThat(last).isNotNull();
          assertThat(last.get("breakers").get(key).asText()).isEqualTo("FORCED_OPEN");
        });

    String dom = chromium.dumpDom(adminUrl("/dashboard"), 5_000);

    Matcher bodyTag = Pattern.compile("<body[^>]*>").matcher(dom);
    assertThat(bodyTag.find()).as("a <body> in the dumped DOM:%n%s", head(dom)).isTrue();
    String body = bodyTag.group();
    assertThat(attribute(body, "data-ready")).as("the page fetched its JSON").isEqualTo("true");
    assertThat(Integer.parseInt(attribute(body, "data-samples"))).isGreaterThan(0);
    assertThat(attribute(body, "data-charts-drawn")).as("all six charts drew").isEqualTo("6");
    for (String chart :
        List.of("c-requests", "c-attempts", "c-latency", "c-limit", "c-shed", "c-breakers")) {
      Matcher canvas = Pattern.compile("<canvas id=\"" + chart + "\"[^>]*>").matcher(dom);
      assertThat(canvas.find()).as(chart).isTrue();
      assertThat(Integer.parseInt(attribute(canvas.group(), "data-ink")))
          .as("%s has pixels drawn", chart)
          .isPositive();
    }
    assertThat(dom)
        .as("the breaker table shows the opened breaker")
        .containsPattern(
            "<tr data-breaker=\"" + Pattern.quote(key) + "\" data-state=\"FORCED_OPEN\"");
    Matcher timeline = Pattern.compile("<canvas id=\"c-breakers\"[^>]*>").matcher(dom);
    assertThat(timeline.find()).isTrue();
    assertThat(attribute(timeline.group(), "data-timeline").replace("&quot;", "\""))
        .as("the timeline drew the breaker closed, then forced open")
        .contains("\"" + key + "\":\"CLOSED,FORCED_OPEN\"");
    assertThat(attribute(body, "data-errors")).isEqualTo("0");
  }

  @Test
  void jsonCountsRequestsByOutcomeGroup() throws Exception {
    // After the first sample (the sampler's baseline came before it), every request is counted.
    await().atMost(Duration.ofSeconds(30)).until(() -> samples().size() > 0);
    for (int i = 0; i < 5; i++) {
      fx.get(proxy.port(), "/api/" + i);
    }
    fx.get(proxy.port(), "/nowhere");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> {
          double fresh = 0;
          double other = 0;
          double attempts = 0;
          for (JsonNode s : samples()) {
            double seconds = s.get("seconds").asDouble();
            fresh += s.get("requests").get("fresh").asDouble() * seconds;
            other += s.get("requests").get("other").asDouble() * seconds;
            attempts += s.get("attempts").asDouble() * seconds;
          }
          // Rates times their intervals give the counts back.
          assertThat(fresh).isCloseTo(5.0, within(0.01));
          assertThat(other).as("404 no route").isCloseTo(1.0, within(0.01));
          assertThat(attempts).isCloseTo(5.0, within(0.01));
        });
    HttpResponse<String> page = fx.get(admin.port(), "/dashboard");
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
    assertThat(page.body()).doesNotContain("http://", "https://").contains("/admin/dashboard.json");
  }

  private JsonNode samples() throws Exception {
    return JSON.readTree(fx.get(admin.port(), "/admin/dashboard.json").body()).get("samples");
  }

  private String adminUrl(String path) {
    return "http://127.0.0.1:" + admin.port() + path;
  }

  private static String attribute(String tag, String name) {
    Matcher m = Pattern.compile(name + "=\"([^\"]*)\"").matcher(tag);
    assertThat(m.find()).as("%s in %s", name, tag).isTrue();
    return m.group(1);
  }

  private static String head(String s) {
    return s.length() > 1500 ? s.substring(0, 1500) : s;
  }
}
