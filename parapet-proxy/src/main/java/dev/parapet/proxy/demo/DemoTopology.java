package dev.parapet.proxy.demo;

import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.config.InvalidConfigException;
import dev.parapet.proxy.config.ProxyConfig;
import dev.parapet.proxy.faultorigin.Behaviour;
import dev.parapet.proxy.faultorigin.FaultOrigin;
import dev.parapet.proxy.faultorigin.FaultOriginSettings;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.faultorigin.Latency;
import dev.parapet.proxy.runtime.ProxyRuntime;
import io.micrometer.core.instrument.Counter;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The demo's processes, in one JVM, all on loopback with ephemeral ports:
 *
 * <pre>
 *   load generator ─► edge ─► shield ─┬─► api origin     (/api/, plays the timeline)
 *                     admin             └─► static origin  (/static/, healthy, cacheable)
 *                     + dashboard
 * </pre>
 *
 * Both tiers are real {@link ProxyRuntime}s built from the bundled {@code shield.yaml} and {@code
 * edge.yaml} (resources next to this class), with their ports filled in. Started from the origin
 * side, so each tier finds the next one listening.
 */
final class DemoTopology implements AutoCloseable {
  private final List<AutoCloseable> running = new ArrayList<>();
  final FaultOrigin api;
  final FaultOrigin statics;
  final ProxyRuntime shield;
  final ProxyRuntime edge;

  private DemoTopology(
      FaultOrigin api, FaultOrigin statics, ProxyRuntime shield, ProxyRuntime edge) {
    this.api = api;
    this.statics = statics;
    this.shield = shield;
    this.edge = edge;
  }

  static DemoTopology start(long seed) throws IOException, InterruptedException {
    List<AutoCloseable> started = new ArrayList<>();
    try {
      FaultOriginSettings loopback = FaultOriginSettings.loopback();
      FaultOrigin api = FaultOrigin.start(loopback.withSeed(seed), Timeline.healthyPlan());
      started.add(api);
      FaultOrigin statics =
          FaultOrigin.start(
              loopback.withSeed(seed + 1),
              FaultPlan.of(
                  Behaviour.builder()
                      .latency(Latency.parse("latency", "uniform:1ms-5ms"))
                      .cacheControl("public, max-age=2")
                      .build()));
      started.add(statics);
      ProxyRuntime shield =
          runtime(
              "shield.yaml",
              Map.of("API_PORT", api.port(), "STATIC_PORT", statics.port()),
              seed + 2);
      started.add(shield);
      ProxyRuntime edge =
          runtime("edge.yaml", Map.of("SHIELD_PORT", shield.proxy().port()), seed + 3);
      started.add(edge);
      DemoTopology t = new DemoTopology(api, statics, shield, edge);
      t.running.addAll(started);
      return t;
    } catch (IOException | InterruptedException | RuntimeException e) {
      closeAll(started);
      throw e;
    }
  }

  private static ProxyRuntime runtime(String resource, Map<String, Integer> ports, long seed)
      throws IOException, InterruptedException {
    String yaml = resource(resource).replace("{{MODE}}", "shadow");
    for (Map.Entry<String, Integer> e : ports.entrySet()) {
      yaml = yaml.replace("{{" + e.getKey() + "}}", Integer.toString(e.getValue()));
    }
    ProxyConfig config;
    try {
      config = ConfigLoader.parse(yaml, "demo/" + resource, Path.of(".")).config();
    } catch (InvalidConfigException e) {
      throw new IllegalStateException("demo/" + resource + " : " + e.getMessage(), e);
    }
    return ProxyRuntime.start(config, Ticker.system(), RandomSource.seeded(seed), 1);
  }

  static String resource(String name) {
    try (InputStream in = DemoTopology.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException(
            "demo : resource " + name + " missing (expected: bundled in the jar)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  InetSocketAddress edgeAddress() {
    return new InetSocketAddress("127.0.0.1", edge.proxy().port());
  }

  String dashboardUrl() {
    return "http://127.0.0.1:" + edge.admin().port() + "/dashboard";
  }

  String shieldDashboardUrl() {
    return "http://127.0.0.1:" + shield.admin().port() + "/dashboard";
  }

  /** Every breaker of both tiers, shield first. */
  List<CircuitBreaker> breakers() {
    List<CircuitBreaker> all = new ArrayList<>(shield.proxy().breakers().all());
    all.addAll(edge.proxy().breakers().all());
    return all;
  }

  /** The breakers on the API route: the shield's (in front of the origin) and the edge's. */
  List<CircuitBreaker> apiBreakers() {
    List<CircuitBreaker> api = new ArrayList<>();
    for (CircuitBreaker b : breakers()) {
      if (b.key().toString().contains("/api/")) {
        api.add(b);
      }
    }
    return api;
  }

  /** The shield's breaker in front of the API origin. */
  @Nullable CircuitBreaker shieldApiBreaker() {
    for (CircuitBreaker b : shield.proxy().breakers().all()) {
      if (b.key().toString().contains("/api/")) {
        return b;
      }
    }
    return null;
  }

  /** Puts every breaker of both tiers in {@code mode}, closed and without history. */
  void resetBreakers(Mode mode) {
    long now = Ticker.system().read();
    for (CircuitBreaker b : breakers()) {
      b.mode(mode);
      b.reset(now);
    }
  }

  /** Attempts the shield made to the API origin so far, whatever their result. */
  long apiAttempts() {
    double sum = 0;
    for (Counter c :
        shield
            .proxy()
            .metrics()
            .registry()
            .find("parapet.origin.attempts")
            .tag("origin", "api")
            .counters()) {
      sum += c.count();
    }
    return Math.round(sum);
  }

  static String shortKey(CircuitBreaker b) {
    return b.key().toString().toLowerCase(Locale.ROOT);
  }

  @Override
  public void close() {
    closeAll(running);
  }

  private static void closeAll(List<AutoCloseable> list) {
    for (int i = list.size() - 1; i >= 0; i--) {
      try {
        list.get(i).close();
      } catch (Exception e) {
        // Closing the rest matters more.
      }
    }
    list.clear();
  }
}
