package dev.parapet.proxy.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.fleet.LeaseSource;
import dev.parapet.proxy.config.FleetLimitConfig;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The tick thread runs only while some origin has a fleet ceiling. */
class FleetLimitsTest {
  private static final LeaseSource NEVER = tokens -> new CompletableFuture<>();

  private static FleetLimitConfig config() {
    return new FleetLimitConfig(
        100, 10, URI.create("redis://127.0.0.1:6379"), "k", 2, null, Duration.ofMillis(5));
  }

  @Test
  void aProxyWithoutFleetCeilingsRunsNoTickThread() {
    try (FleetLimits limits = FleetLimits.start(System::nanoTime, (origin, c) -> NEVER)) {
      assertThat(limits.ticking()).isFalse();
      limits.reconcile(Map.of());
      assertThat(limits.ticking()).isFalse();

      limits.reconcile(Map.of("api", config()));
      assertThat(limits.ticking()).isTrue();
      assertThat(limits.limiter("api")).isNotNull();

      limits.reconcile(Map.of()); // the ceiling is configured away: so is the thread
      assertThat(limits.ticking()).isFalse();
      assertThat(limits.limiter("api")).isNull();
    }
  }
}
