package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.proxy.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The shipped examples validate cleanly and form the tiered chain their comments describe. Each is
 * read from a copy beside the certificate files {@code bin/dev-certs} would make (made here
 * instead), which edge.yaml's HTTPS listener reads.
 */
class ExamplesTest {
  static final Path EXAMPLES = Path.of("..", "examples");

  @TempDir static Path dir;

  @BeforeAll
  static void devCertificates() throws Exception {
    Files.createDirectories(dir.resolve("certs"));
    TestCertificates.ca("dev CA")
        .issue("edge.test", "localhost")
        .write(dir.resolve("certs"), "edge");
  }

  static ProxyConfig example(String name) throws Exception {
    Path copy = dir.resolve(name);
    Files.copy(EXAMPLES.resolve(name), copy, StandardCopyOption.REPLACE_EXISTING);
    LoadedConfig loaded = ConfigLoader.load(copy);
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

  @Test
  void theEdgeTerminatesTlsBesideItsPlainListener() throws Exception {
    ProxyConfig edge = example("edge.yaml");
    assertThat(edge.tls()).isNotNull();
    assertThat(edge.tls().listen()).isEqualTo(new HostPort("127.0.0.1", 8443));
    assertThat(edge.listen()).isEqualTo(new HostPort("127.0.0.1", 8080));
  }

  @Test
  void theEdgeWithoutItsCertificateSaysWhichFileIsMissing(@TempDir Path bare) throws Exception {
    Path copy = bare.resolve("edge.yaml");
    Files.copy(EXAMPLES.resolve("edge.yaml"), copy);
    assertThatThrownBy(() -> ConfigLoader.load(copy))
        .hasMessageContaining("tls.certificates[0].cert_file")
        .hasMessageContaining("edge.pem");
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
