package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The shipped examples validate cleanly and form the tiered chain their comments describe. */
class ExamplesTest {
  static final Path EXAMPLES = Path.of("..", "examples");

  static ProxyConfig example(String name) throws Exception {
    LoadedConfig loaded = ConfigLoader.load(EXAMPLES.resolve(name));
    assertThat(loaded.warnings()).as(name + " warnings").isEmpty();
    return loaded.config();
  }

  @ParameterizedTest
  @ValueSource(strings = {"edge.yaml", "shield.yaml", "connector.yaml"})
  void validatesWithoutWarnings(String name) throws Exception {
    ProxyConfig c = example(name);
    assertThat(c.routes()).extracting(r -> r.match().prefix()).containsExactly("/api/", "/static/");
    assertThat(c.routes().get(0).cache().enabled()).isFalse();
    assertThat(c.routes().get(1).cache().enabled()).isTrue();
    assertThat(c.listen().isLoopback()).isTrue();
    assertThat(c.admin().listen().isLoopback()).isTrue();
  }

  /**
   * edge-tls.yaml with the files bin/dev-certs would make (made here instead): it validates without
   * warnings and is edge.yaml plus the HTTPS listener.
   */
  @Test
  void theTlsEdgeIsTheEdgeWithAnHttpsListener(@TempDir Path dir) throws Exception {
    Files.createDirectories(dir.resolve("certs"));
    TestCertificates.ca("dev CA")
        .issue("edge.test", "localhost")
        .write(dir.resolve("certs"), "edge");
    Path copy = dir.resolve("edge-tls.yaml");
    Files.copy(EXAMPLES.resolve("edge-tls.yaml"), copy);
    LoadedConfig loaded = ConfigLoader.load(copy);
    assertThat(loaded.warnings()).isEmpty();
    ProxyConfig tls = loaded.config();
    ProxyConfig edge = example("edge.yaml");
    assertThat(tls.tls()).isNotNull();
    assertThat(tls.tls().listen()).isEqualTo(new HostPort("127.0.0.1", 8443));
    assertThat(tls.origins()).isEqualTo(edge.origins());
    assertThat(tls.routes()).isEqualTo(edge.routes());
    assertThat(tls.cache()).isEqualTo(edge.cache());
  }

  @Test
  void theChainLinksUpAndBudgetsShrinkTowardTheOrigin() throws Exception {
    ProxyConfig edge = example("edge.yaml");
    ProxyConfig shield = example("shield.yaml");
    ProxyConfig connector = example("connector.yaml");
    assertThat(edge.listen().port()).isEqualTo(8080);
    assertThat(shield.listen().port()).isEqualTo(8081);
    assertThat(connector.listen().port()).isEqualTo(8082);
    assertThat(edge.admin().listen().port()).isEqualTo(9901);
    assertThat(shield.admin().listen().port()).isEqualTo(9902);
    assertThat(connector.admin().listen().port()).isEqualTo(9903);
    assertThat(edge.origin("shield").hosts()).containsExactly(shield.listen());
    assertThat(shield.origin("connector").hosts()).containsExactly(connector.listen());
    assertThat(connector.origin("api").hosts()).containsExactly(new HostPort("127.0.0.1", 9001));
    assertThat(connector.origin("static").hosts()).containsExactly(new HostPort("127.0.0.1", 9002));

    assertThat(edge.deadline().defaultBudget()).isEqualTo(Duration.ofSeconds(8));
    assertThat(shield.deadline().defaultBudget()).isEqualTo(Duration.ofSeconds(5));
    assertThat(connector.deadline().defaultBudget()).isEqualTo(Duration.ofSeconds(3));
    for (ProxyConfig tier : new ProxyConfig[] {edge, shield, connector}) {
      for (RouteConfig r : tier.routes()) {
        assertThat(r.timeout()).isEqualTo(tier.deadline().defaultBudget());
      }
    }
    // Each tier waits for the next longer than the next tier's own budget (so the next tier
    // answers first) and shorter than its own budget (so it still has time to answer).
    assertThat(edge.origin("shield").timeout())
        .isGreaterThan(shield.deadline().defaultBudget())
        .isLessThan(edge.deadline().defaultBudget());
    assertThat(shield.origin("connector").timeout())
        .isGreaterThan(connector.deadline().defaultBudget())
        .isLessThan(shield.deadline().defaultBudget());
    assertThat(connector.origin("api").timeout()).isLessThan(connector.deadline().defaultBudget());
    // Only the tier next to the origin retries 503s.
    assertThat(edge.origin("shield").retry().on().statuses().contains(503)).isFalse();
    assertThat(shield.origin("connector").retry().on().statuses().contains(503)).isFalse();
    assertThat(connector.origin("api").retry().on().statuses().contains(503)).isTrue();
    assertThat(connector.routes().get(0).breaker().failureRate()).isEqualTo(0.40);
  }
}
