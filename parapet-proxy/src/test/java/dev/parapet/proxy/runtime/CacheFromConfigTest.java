package dev.parapet.proxy.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.config.ProxyConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runtime builds the edge cache from {@code cache:} and each route's {@code cache:}. */
class CacheFromConfigTest {
  @TempDir Path dir;

  private ProxyConfig config(String maxSize) throws Exception {
    Path file = dir.resolve("p.yaml");
    Files.writeString(
        file,
        """
        name: edge-9
        listen: 127.0.0.1:0
        cache: {max_size: %s, stale_if_error: 120s, stale_while_revalidate: 10s}
        origins:
          o: {hosts: [127.0.0.1:9]}
        routes:
          - match: {prefix: /api/}
            origin: o
            cache: off
          - match: {prefix: /static/}
            origin: o
            cache: {default_ttl: 30s}
          - match: {prefix: /}
            origin: o
        """
            .formatted(maxSize));
    return ConfigLoader.load(file).config();
  }

  @Test
  void routesCacheUnlessOffWithTheirDefaultTtl() throws Exception {
    EdgeCache c = ProxyRuntime.cache(config("8MiB"), null);
    assertThat(c.name()).isEqualTo("edge-9");
    assertThat(c.caches("*/api/")).isFalse();
    assertThat(c.caches("*/static/")).isTrue();
    assertThat(c.defaultTtlNanos("*/static/")).isEqualTo(Duration.ofSeconds(30).toNanos());
    assertThat(c.caches("*/")).isTrue();
    assertThat(c.defaultTtlNanos("*/")).isZero();
    assertThat(c.store().maxBytes()).isEqualTo(8L * 1024 * 1024);
    assertThat(c.store().maxObjectBytes()).isEqualTo(512L * 1024);
  }

  @Test
  void aReloadKeepsTheStoreOnlyWhenTheCacheSettingsAreUnchanged() throws Exception {
    EdgeCache first = ProxyRuntime.cache(config("8MiB"), null);
    EdgeCache same = ProxyRuntime.cache(config("8MiB"), first);
    assertThat(same.store()).isSameAs(first.store());
    assertThat(same.collapser()).isSameAs(first.collapser());
    EdgeCache resized = ProxyRuntime.cache(config("16MiB"), same);
    assertThat(resized.store()).isNotSameAs(first.store());
    assertThat(resized.store().maxBytes()).isEqualTo(16L * 1024 * 1024);
  }
}
