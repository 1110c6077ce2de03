package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import dev.parapet.proxy.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Walks every key docs/configuration.md lists and shows, for each, that setting it to a valid value
 * other than its default changes the loaded configuration, and that an invalid value is refused at
 * its YAML path. A key added to the docs without a row here, or a row for a key the docs do not
 * list, fails the test. What each value then does at run time is shown by the behavioural tests of
 * each part (breakers, balancing, admission, cache, ...).
 */
class DocumentedKeysTest {
  private static final ObjectMapper YAML =
      new ObjectMapper(new YAMLFactory().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER));
  private static final Pattern SECTION = Pattern.compile("^#{2,3} `([^`]+)`\\s*$");
  private static final Pattern ROW = Pattern.compile("^\\| (`[^|]+) \\|");
  private static final Pattern KEY = Pattern.compile("`([^`]+)`");

  @TempDir static Path dir;
  private static Path tokenFile = Path.of("unset");
  private static String certificates = "unset";
  private static String cert = "unset";
  private static String key = "unset";
  private static String otherKey = "unset";
  private static String ca = "unset";

  @BeforeAll
  static void files() throws Exception {
    tokenFile = dir.resolve("admin.token");
    Files.writeString(tokenFile, "t0ken\n");
    TestCertificates.Ca authority = TestCertificates.ca("Keys CA");
    TestCertificates.Files2 edge = authority.issue("edge.test").write(dir, "edge");
    TestCertificates.Files2 other = authority.issue("other.test").write(dir, "other");
    cert = "'" + edge.cert() + "'";
    key = "'" + edge.key() + "'";
    otherKey = "'" + other.key() + "'";
    ca = "'" + authority.write(dir.resolve("ca.pem")) + "'";
    certificates = "[{cert_file: " + cert + ", key_file: " + key + "}]";
  }

  /**
   * {@code key}: a YAML value other than the default (with any other keys it needs), and an invalid
   * one; {@code bad} null where a key has no invalid spelling (none here today).
   */
  private record Row(String key, Map<String, String> good, @Nullable String bad) {}

  private static Row row(String key, String good, @Nullable String bad) {
    return new Row(key, Map.of(key, good), bad);
  }

  private static List<Row> rows() {
    String o = "origins.api.";
    String b = "origins.api.breaker.";
    String r = "routes[0].";
    List<Row> rows = new ArrayList<>();
    // Top level
    rows.add(row("name", "edge-7", "'bad name!'"));
    rows.add(row("listen", "127.0.0.1:8181", "nowhere"));
    rows.add(row("trusted_proxies", "[10.0.0.0/8]", "[10.0.0.0/99]"));
    rows.add(row("admin.listen", "127.0.0.1:9911", "127.0.0.1:99999"));
    rows.add(row("admin.token_file", "'" + tokenFile + "'", "'" + dir.resolve("none") + "'"));
    rows.add(row("admin.hosts", "[admin.internal]", "['a b']"));
    rows.add(
        new Row(
            "admin.read_token",
            Map.of("admin.read_token", "required", "admin.token_file", "'" + tokenFile + "'"),
            "sometimes"));
    rows.add(row("drain_timeout", "30s", "soon"));
    rows.add(row("http2.max_concurrent_streams", "50", "0"));
    rows.add(row("http2.max_header_list_size", "64KiB", "100"));
    rows.add(row("http2.initial_window_size", "1MiB", "4GiB"));
    rows.add(row("http2.resets.count", "50", "0"));
    rows.add(row("http2.resets.within", "10s", "x"));
    rows.add(row("access_log.path", "'" + dir.resolve("access.log") + "'", "'/no/such/dir/a'"));
    // tls
    String t = "tls.";
    rows.add(
        new Row(
            t + "listen",
            Map.of(t + "listen", "127.0.0.1:8444", t + "certificates", certificates),
            "nowhere"));
    rows.add(
        new Row(
            t + "certificates",
            Map.of(t + "certificates", certificates),
            "[{cert_file: " + cert + ", key_file: " + otherKey + "}]"));
    rows.add(
        new Row(
            t + "protocols",
            Map.of(t + "protocols", "[TLSv1.3]", t + "certificates", certificates),
            "[SSLv3]"));
    rows.add(
        new Row(
            t + "provider",
            Map.of(t + "provider", "jdk", t + "certificates", certificates),
            "magic"));
    // deadline, admission, overload, cache
    rows.add(row("deadline.default", "5s", "soon"));
    rows.add(row("deadline.reserve", "80ms", "-1s"));
    rows.add(row("deadline.min_useful", "30ms", "x"));
    rows.add(row("admission.limit.algorithm", "fixed", "magic"));
    rows.add(row("admission.limit.initial", "100", "-5"));
    rows.add(row("admission.limit.min", "10", "0"));
    rows.add(row("admission.limit.max", "1000", "x"));
    rows.add(row("admission.queue.max", "10", "-1"));
    rows.add(row("admission.queue.target_sojourn", "10ms", "x"));
    rows.add(row("admission.queue.interval", "200ms", "x"));
    rows.add(row("admission.priority.header", "X-Prio", "'a b'"));
    rows.add(row("admission.priority.default", "3", "9"));
    rows.add(row("admission.retry_after.min", "2s", "x"));
    rows.add(row("admission.retry_after.max", "10s", "x"));
    rows.add(row("admission.per_client.max_inflight", "5", "-1"));
    rows.add(row("overload.heap.shed_low", "0.8", "2"));
    rows.add(row("overload.heap.stop_accepting", "0.9", "2"));
    rows.add(row("overload.cpu.shed_low", "0.7", "2"));
    rows.add(row("overload.event_loop_lag.shed_low", "200ms", "x"));
    rows.add(row("overload.event_loop_lag.stop_accepting", "2s", "x"));
    rows.add(row("cache.max_size", "64MiB", "huge"));
    rows.add(row("cache.stale_if_error", "10s", "x"));
    rows.add(row("cache.stale_if_error_on", "[timeout, 5xx]", "[sometimes]"));
    rows.add(row("cache.stale_while_revalidate", "5s", "x"));
    rows.add(row("cache.heuristic", "{fraction: 5%, max: 1h}", "{fraction: 200%}"));
    rows.add(row("tracing.otlp_endpoint", "'http://127.0.0.1:4318/v1/traces'", "'ftp://x'"));
    rows.add(
        new Row(
            "tracing.sample",
            Map.of("tracing.sample", "10%", "tracing.otlp_endpoint", "'http://127.0.0.1:4318/'"),
            "200%"));
    rows.add(
        new Row(
            "tracing.service_name",
            Map.of("tracing.service_name", "edge-a", "tracing.otlp_endpoint", "'http://h:1/'"),
            "''"));
    // origins.NAME
    rows.add(row(o + "hosts", "[127.0.0.1:9005]", "[nowhere]"));
    rows.add(row(o + "balancer", "round_robin", "random"));
    rows.add(
        new Row(
            o + "hash_key",
            Map.of(o + "balancer", "ring_hash", o + "hash_key", "{header: X-User}"),
            "{header: 'a b'}"));
    rows.add(row(o + "connect_timeout", "100ms", "x"));
    rows.add(row(o + "timeout", "2s", "x"));
    rows.add(row(o + "limits.max_connections", "10", "0"));
    rows.add(row(o + "limits.max_pending", "10", "-1"));
    rows.add(row(o + "limits.max_requests", "10", "0"));
    rows.add(row(o + "retry.attempts", "3", "11"));
    rows.add(row(o + "retry.on", "[timeout]", "[sometimes]"));
    rows.add(row(o + "retry.budget.ratio", "10%", "x"));
    rows.add(row(o + "retry.budget.min_concurrency", "2", "-1"));
    rows.add(row(o + "retry.backoff.base", "10ms", "x"));
    rows.add(row(o + "retry.backoff.max", "100ms", "x"));
    rows.add(row(o + "retry.capacity_hold", "5s", "x"));
    rows.add(row(o + "hedge", "{}", "[1]"));
    rows.add(row(o + "hedge.delay", "p99", "p200"));
    rows.add(row(o + "hedge.min_delay", "10ms", "x"));
    rows.add(row(o + "hedge.budget", "5%", "x"));
    rows.add(row(o + "breaker", "{mode: shadow}", "[1]"));
    rows.add(row(o + "outlier.consecutive_5xx", "3", "-1"));
    rows.add(row(o + "outlier.failure_percentage", "30%", "x"));
    rows.add(row(o + "outlier.min_requests", "50", "0"));
    rows.add(row(o + "outlier.interval", "5s", "x"));
    rows.add(row(o + "outlier.base_ejection", "10s", "x"));
    rows.add(row(o + "outlier.max_ejection", "600s", "x"));
    rows.add(row(o + "outlier.max_ejected", "20%", "x"));
    rows.add(row(o + "health_check", "{}", "[1]"));
    rows.add(row(o + "health_check.path", "/ok", "ok"));
    rows.add(row(o + "health_check.interval", "10s", "x"));
    rows.add(row(o + "health_check.timeout", "500ms", "x"));
    rows.add(row(o + "health_check.healthy", "3", "0"));
    rows.add(row(o + "health_check.unhealthy", "4", "0"));
    rows.add(row(o + "slow_start", "10s", "x"));
    rows.add(row(o + "fallback", "other", "nowhere"));
    rows.add(row(o + "tls", "{}", "[1]"));
    rows.add(row(o + "tls.sni", "api.example.com", "'a b'"));
    rows.add(row(o + "tls.verify", "false", "maybe"));
    rows.add(row(o + "tls.ca_file", ca, "'" + dir.resolve("none.pem") + "'"));
    rows.add(
        new Row(
            o + "tls.cert_file",
            Map.of(o + "tls.cert_file", cert, o + "tls.key_file", key),
            "'" + dir.resolve("none.pem") + "'"));
    rows.add(
        new Row(
            o + "tls.key_file",
            Map.of(o + "tls.cert_file", cert, o + "tls.key_file", key),
            otherKey));
    // origins.NAME.fleet_limit: rate and redis are required, so every row sets them
    String f = o + "fleet_limit.";
    rows.add(row(o + "fleet_limit", "{rate: 100/s, redis: 'redis://127.0.0.1:6379'}", "[1]"));
    for (String[] k :
        new String[][] {
          {"rate", "600/min", "fast"},
          {"burst", "50", "0"},
          {"redis", "redis://127.0.0.1:6380", "http://127.0.0.1:6379"},
          {"key", "edge-api", "'a b'"},
          {"instances", "3", "0"},
          {"lease", "5", "0"},
          {"timeout", "10ms", "x"}
        }) {
      Map<String, String> good = new LinkedHashMap<>();
      good.put(f + "rate", "100/s");
      good.put(f + "redis", "redis://127.0.0.1:6379");
      good.put(f + k[0], k[1]);
      rows.add(new Row(f + k[0], good, k[2]));
    }
    // origins.NAME.breaker
    rows.add(row(b + "scope", "origin", "planet"));
    rows.add(row(b + "mode", "shadow", "loud"));
    rows.add(row(b + "window", "20s", "x"));
    rows.add(row(b + "buckets", "50", "0"));
    rows.add(row(b + "window_size", "50", "0"));
    rows.add(row(b + "min_requests", "20", "0"));
    rows.add(row(b + "failure_rate", "30%", "150%"));
    rows.add(row(b + "failure_statuses", "[5xx]", "[6xx]"));
    rows.add(row(b + "slow.threshold", "1s", "fast"));
    rows.add(
        new Row(
            b + "slow.floor",
            Map.of(b + "slow.threshold", "3x p95", b + "slow.floor", "50ms"),
            "x"));
    rows.add(row(b + "slow.weight", "0.25", "2"));
    rows.add(row(b + "slow.rate", "20%", "x"));
    rows.add(row(b + "connect_failures.count", "5", "-1"));
    rows.add(row(b + "connect_failures.within", "5s", "x"));
    rows.add(row(b + "open.base", "10s", "x"));
    rows.add(row(b + "open.max", "1m", "x"));
    rows.add(row(b + "open.jitter", "10%", "100%"));
    rows.add(row(b + "half_open.probes", "5", "0"));
    rows.add(row(b + "half_open.spacing", "1s", "x"));
    rows.add(row(b + "half_open.required", "1", "0"));
    rows.add(row(b + "half_open.max_latency", "2s", "x"));
    rows.add(row(b + "half_open.probe_timeout", "10s", "x"));
    rows.add(row(b + "ramp.from", "10%", "0%"));
    rows.add(row(b + "ramp.over", "1m", "x"));
    rows.add(row(b + "flapping.opens", "5", "0"));
    rows.add(row(b + "flapping.within", "30m", "x"));
    rows.add(row(b + "probe", "{path: /status}", "{path: status}"));
    // routes[i]
    rows.add(row(r + "match.host", "shop.example.com", "'shop.example.com:80'"));
    rows.add(row(r + "match.prefix", "/api/", "api"));
    rows.add(row(r + "origin", "other", "nowhere"));
    rows.add(row(r + "timeout", "2s", "x"));
    rows.add(row(r + "priority", "1", "5"));
    rows.add(row(r + "share", "30%", "150%"));
    rows.add(row(r + "breaker", "{failure_rate: 20%}", "{failure_rate: 0%}"));
    rows.add(row(r + "cache", "off", "[1]"));
    rows.add(row(r + "cache.default_ttl", "10s", "x"));
    rows.add(row(r + "cache.stale_on_slow", "200ms", "x"));
    rows.add(row(r + "retry_non_idempotent", "true", "maybe"));
    return rows;
  }

  /** The keys docs/configuration.md lists, as full paths ({@code origins.api.breaker.window}). */
  static Set<String> documentedKeys() throws Exception {
    Set<String> keys = new LinkedHashSet<>();
    String prefix = null;
    for (String line : Files.readAllLines(docs())) {
      if (line.startsWith("## ")) {
        prefix = line.equals("## Top level") ? "" : null;
      }
      Matcher s = SECTION.matcher(line);
      if (s.matches()) {
        prefix =
            switch (s.group(1)) {
              case "origins.NAME" -> "origins.api.";
              case "origins.NAME.breaker" -> "origins.api.breaker.";
              case "routes[i]" -> "routes[0].";
              default -> s.group(1) + ".";
            };
      }
      Matcher row = ROW.matcher(line);
      if (prefix == null || !row.find()) {
        continue;
      }
      String previous = null;
      Matcher k = KEY.matcher(row.group(1));
      while (k.find()) {
        String key = k.group(1);
        if (key.startsWith(".") && previous != null) {
          key = previous.substring(0, previous.lastIndexOf('.')) + key;
        }
        keys.add(prefix + key);
        previous = key;
      }
    }
    return keys;
  }

  private static Path docs() {
    Path p = Path.of("docs/configuration.md");
    return Files.exists(p) ? p : Path.of("..", "docs", "configuration.md");
  }

  @Test
  void everyDocumentedKeyHasARowAndEveryRowIsDocumented() throws Exception {
    Set<String> documented = documentedKeys();
    Set<String> tested = new LinkedHashSet<>();
    rows().forEach(r -> tested.add(r.key()));
    assertThat(documented).hasSizeGreaterThan(90);
    assertThat(tested).containsExactlyInAnyOrderElementsOf(documented);
  }

  @Test
  void everyKeyChangesTheConfigurationOrIsRefusedAtItsPath() throws Exception {
    ProxyConfig base = ConfigLoader.parse(yaml(Map.of()), "test.yaml", dir).config();
    List<String> failures = new ArrayList<>();
    for (Row r : rows()) {
      String good = yaml(r.good());
      try {
        ProxyConfig c = ConfigLoader.parse(good, "test.yaml", dir).config();
        if (c.equals(base)) {
          failures.add(r.key() + ": " + r.good() + " left the configuration unchanged");
        }
      } catch (InvalidConfigException e) {
        failures.add(r.key() + ": " + r.good() + " was refused: " + e.errors());
      }
      if (r.bad() == null) {
        continue;
      }
      Map<String, String> bad = new LinkedHashMap<>(r.good());
      bad.put(r.key(), r.bad());
      try {
        ConfigLoader.parse(yaml(bad), "test.yaml", dir);
        failures.add(r.key() + ": " + r.bad() + " was accepted");
      } catch (InvalidConfigException e) {
        boolean atPath =
            e.errors().stream()
                .anyMatch(p -> p.path().equals(r.key()) || p.path().startsWith(r.key()));
        if (!atPath) {
          failures.add(r.key() + ": " + r.bad() + " refused elsewhere: " + e.errors());
        }
      }
    }
    assertThat(failures).isEmpty();
  }

  /**
   * A configuration with two origins ({@code api}, {@code other}) and one route to {@code api},
   * with {@code values} (YAML snippets by dotted path) set over it.
   */
  private static String yaml(Map<String, String> values) throws Exception {
    Map<String, Object> root = new LinkedHashMap<>();
    Map<String, Object> origins = new LinkedHashMap<>();
    origins.put("api", new LinkedHashMap<>(Map.of("hosts", List.of("127.0.0.1:9001"))));
    origins.put("other", new LinkedHashMap<>(Map.of("hosts", List.of("127.0.0.1:9002"))));
    root.put("origins", origins);
    Map<String, Object> route = new LinkedHashMap<>(Map.of("origin", "api"));
    root.put("routes", List.of(route));
    for (Map.Entry<String, String> e : values.entrySet()) {
      String path = e.getKey();
      Map<String, Object> at = root;
      if (path.startsWith("routes[0].")) {
        at = route;
        path = path.substring("routes[0].".length());
      }
      String[] parts = path.split("\\.");
      for (int i = 0; i < parts.length - 1; i++) {
        at = child(at, parts[i]);
      }
      at.put(parts[parts.length - 1], YAML.readValue(e.getValue(), Object.class));
    }
    return YAML.writeValueAsString(root);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> child(Map<String, Object> at, String key) {
    Object c = at.get(key);
    if (c instanceof Map<?, ?> m) {
      return (Map<String, Object>) m;
    }
    Map<String, Object> m = new LinkedHashMap<>();
    at.put(key, m);
    return m;
  }
}
