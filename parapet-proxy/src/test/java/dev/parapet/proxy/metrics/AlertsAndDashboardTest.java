package dev.parapet.proxy.metrics;

import static dev.parapet.proxy.testing.ProxyFixture.pool;
import static dev.parapet.proxy.testing.ProxyFixture.route;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.parapet.proxy.admin.AdminServer;
import dev.parapet.proxy.config.HostPort;
import dev.parapet.proxy.config.TlsConfig;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.testing.PathOrigin;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.TestCertificates;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Prometheus alert rules and the Grafana dashboard in {@code examples/}: the rules pass {@code
 * promtool check rules} and their unit tests, the dashboard's queries parse as PromQL, and every
 * metric either names is exported by a running proxy.
 *
 * <p>promtool comes from the Debian package {@code prometheus}; {@code bin/test} installs it when
 * it runs as root and then sets {@code PARAPET_REQUIRE_PROMTOOL=1}, which makes a missing promtool
 * a failure. Without that variable a missing promtool skips the promtool tests.
 */
class AlertsAndDashboardTest {
  /** Metric names the rules use before the proxy exports them: none today. */
  static final Set<String> RESERVED = Set.of();

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern QUOTED = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"");
  private static final Pattern METRIC = Pattern.compile("\\bparapet_[a-zA-Z0-9_]+\\b");

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();

  @TempDir Path tmp;

  @Test
  void rulesPassPromtoolCheck() throws Exception {
    Path rules = repo().resolve("examples/prometheus/parapet-alerts.yml");
    String out = promtool("check", "rules", rules.toString());
    assertThat(out).contains("SUCCESS: " + ruleExpressions(rules).size() + " rules found");
  }

  @Test
  void rulesFireWhereTheirUnitTestsSay() throws Exception {
    Path tests = repo().resolve("examples/prometheus/parapet-alerts.test.yml");
    assertThat(promtool("test", "rules", tests.toString())).contains("SUCCESS");
  }

  @Test
  void dashboardQueriesAreValidPromql() throws Exception {
    List<String> queries = dashboardExpressions();
    StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
    for (int i = 0; i < queries.size(); i++) {
      String expr =
          queries
              .get(i)
              .replace("$__rate_interval", "5m")
              .replace("$instance", ".*")
              .replace("label_values(parapet_requests_total, instance)", "parapet_requests_total");
      rules
          .append("      - record: dashboard_query_")
          .append(i)
          .append("\n        expr: ")
          .append(JSON.writeValueAsString(expr))
          .append('\n');
    }
    Path file = tmp.resolve("dashboard-queries.yml");
    Files.writeString(file, rules, StandardCharsets.UTF_8);
    assertThat(promtool("check", "rules", file.toString()))
        .contains("SUCCESS: " + queries.size() + " rules found");
  }

  @Test
  void everyMetricTheRulesAndTheDashboardNameIsExported() throws Exception {
    PathOrigin origin = fx.pathOrigin("api");
    // With an HTTPS listener, whose certificates' expiry the TLS rule watches.
    TestCertificates.Files2 cert =
        TestCertificates.ca("Rules CA").issue("edge.test").write(tmp, "edge");
    ProxyServer p =
        fx.proxy()
            .routes(route("api", "/", "api"))
            .origins(pool("api", origin.address()).build())
            .tls(
                new TlsConfig(
                    new HostPort("127.0.0.1", 0),
                    List.of(new TlsConfig.Certificate(cert.cert(), cert.key())),
                    TlsConfig.DEFAULT_PROTOCOLS,
                    TlsConfig.Provider.AUTO))
            .start();
    AdminServer admin = fx.admin(p);
    assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200);
    Scrape scrape = new Scrape(fx.get(admin.port(), "/metrics").body());

    Set<String> used = new TreeSet<>();
    for (String expr : ruleExpressions(repo().resolve("examples/prometheus/parapet-alerts.yml"))) {
      used.addAll(metricNames(expr));
    }
    Set<String> inDashboard = new TreeSet<>();
    for (String expr : dashboardExpressions()) {
      inDashboard.addAll(metricNames(expr));
    }
    used.addAll(inDashboard);
    // Enough names that a broken extraction cannot pass by finding none.
    assertThat(inDashboard).hasSizeGreaterThanOrEqualTo(15);
    assertThat(used).containsAll(RESERVED);

    Set<String> missing = new TreeSet<>(used);
    missing.removeAll(RESERVED);
    missing.removeAll(scrape.names());
    assertThat(missing)
        .as("metric names the rules or the dashboard use but /metrics lacks")
        .isEmpty();
    // When the proxy starts exporting a reserved name, it is no longer reserved: say so here.
    for (String reserved : RESERVED) {
      assertThat(scrape.names()).doesNotContain(reserved);
    }
    assertThat(scrape.names()).contains("parapet_tls_certificate_expiry_timestamp_seconds");
  }

  /** Names of metrics in a PromQL expression, outside quoted strings (label values, regexes). */
  static Set<String> metricNames(String promql) {
    String bare = QUOTED.matcher(promql).replaceAll("\"\"");
    Set<String> names = new TreeSet<>();
    Matcher m = METRIC.matcher(bare);
    while (m.find()) {
      names.add(m.group());
    }
    return names;
  }

  private static List<String> ruleExpressions(Path rules) throws IOException {
    List<String> exprs = new ArrayList<>();
    for (JsonNode group : YAML.readTree(rules.toFile()).get("groups")) {
      for (JsonNode rule : group.get("rules")) {
        exprs.add(rule.get("expr").asText());
      }
    }
    return exprs;
  }

  private static List<String> dashboardExpressions() throws IOException {
    JsonNode dash = JSON.readTree(repo().resolve("examples/grafana/parapet.json").toFile());
    List<String> exprs = new ArrayList<>();
    for (JsonNode panel : dash.get("panels")) {
      for (JsonNode target : panel.path("targets")) {
        exprs.add(target.get("expr").asText());
      }
    }
    for (JsonNode variable : dash.path("templating").path("list")) {
      JsonNode q = variable.path("query");
      if (q.has("query")) {
        exprs.add(q.get("query").asText());
      }
    }
    return exprs;
  }

  /** The repository's root: the first directory upwards that holds {@code examples/}. */
  static Path repo() {
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      if (Files.isDirectory(d.resolve("examples/prometheus"))) {
        return d;
      }
    }
    throw new IllegalStateException(
        "examples/prometheus : not found above " + Path.of("").toAbsolutePath());
  }

  /** Runs promtool and returns what it printed; fails the test when it exits non-zero. */
  private String promtool(String... args) throws Exception {
    String exe = onPath("promtool");
    if (exe == null) {
      String message =
          "promtool : not on PATH (expected: the Debian package prometheus, apt-get install"
              + " prometheus)";
      if ("1".equals(System.getenv("PARAPET_REQUIRE_PROMTOOL"))) {
        fail(message + "; PARAPET_REQUIRE_PROMTOOL=1, so a missing promtool is a failure");
      }
      Assumptions.abort(message + "; skipped because PARAPET_REQUIRE_PROMTOOL is not 1");
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(exe);
    cmd.addAll(List.of(args));
    Path log = tmp.resolve("promtool.out");
    Process proc =
        new ProcessBuilder(cmd)
            .directory(repo().toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!proc.waitFor(120, TimeUnit.SECONDS)) {
      proc.destroyForcibly();
      fail("promtool " + String.join(" ", args) + " : still running after 120 s");
    }
    String out = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(proc.exitValue()).as("promtool %s exit code; output:%n%s", args, out).isZero();
    return out;
  }

  static @org.jspecify.annotations.Nullable String onPath(String name) {
    String path = System.getenv("PATH");
    for (String dir : (path == null ? "/usr/bin:/bin" : path).split(File.pathSeparator)) {
      Path p = Path.of(dir, name);
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return null;
  }
}
