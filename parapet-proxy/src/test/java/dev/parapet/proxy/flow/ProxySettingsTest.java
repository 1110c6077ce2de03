package dev.parapet.proxy.flow;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** Request head limits the request decoder could not hold are refused when settings are made. */
class ProxySettingsTest {
  private static ProxySettings withLimits(int maxRequestLine, int maxHeaderBytes) {
    ProxySettings d = ProxySettings.defaults("t", new InetSocketAddress("127.0.0.1", 0));
    return new ProxySettings(
        d.name(),
        d.listen(),
        d.reserve(),
        d.minUseful(),
        d.headerTimeout(),
        d.idleTimeout(),
        d.maxBodyBytes(),
        maxHeaderBytes,
        d.maxHeaderFields(),
        maxRequestLine,
        d.retryAfterMinSeconds(),
        d.retryAfterMaxSeconds(),
        d.admission(),
        d.trustedProxies());
  }

  @Test
  void headLimitsBeyondSixteenBitOffsetsAreRefused() {
    withLimits(8 * 1024, 32 * 1024); // the defaults
    withLimits(32 * 1024, 32 * 1024 - 1);
    assertThatThrownBy(() -> withLimits(32 * 1024, 32 * 1024))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("65536");
    assertThatThrownBy(() -> withLimits(0, 1024)).isInstanceOf(IllegalArgumentException.class);
  }
}
