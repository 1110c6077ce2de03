package dev.parapet.proxy.testing;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.BreakerRegistry;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.flow.ClientLimits;
import dev.parapet.proxy.flow.ProxyContext;
import dev.parapet.proxy.flow.ProxySettings;
import dev.parapet.proxy.http.ProxyError;
import dev.parapet.proxy.metrics.ProxyMetrics;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.route.RouteTable;
import dev.parapet.proxy.upstream.OriginPool;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A {@link ProxyContext} for tests that run the request path without a listener (a connection
 * handler on an {@code EmbeddedChannel}, a flow answering into a recording downstream): the suite's
 * proxy name, the system ticker, {@code RandomSource.seeded(1)}, default admission, no per-client
 * limit, and every breaker made with {@code breakers}. Add a cache or change anything else on the
 * builder.
 */
public final class TestContexts {
  private TestContexts() {}

  public static ProxyContext.Builder builder(
      List<Route> routes, Map<String, OriginPool> origins, BreakerPolicy breakers) {
    ProxySettings settings =
        ProxySettings.defaults(ProxyFixture.NAME, new InetSocketAddress("127.0.0.1", 0));
    ProxyMetrics metrics =
        new ProxyMetrics(
            List.of(), List.of(), Arrays.stream(ProxyError.values()).map(Enum::name).toList());
    return ProxyContext.builder(settings, metrics)
        .routes(new RouteTable(routes))
        .origins(origins)
        .breakers(
            new BreakerRegistry(
                Math.max(1, routes.size() * 4),
                Duration.ofDays(1),
                key ->
                    new CircuitBreaker(
                        key,
                        breakers,
                        RandomSource.seeded(1),
                        BreakerListener.NONE,
                        System.nanoTime())))
        .clock(Ticker.system(), RandomSource.seeded(1))
        .admission(AdmissionController.withDefaults(), new ClientLimits(0));
  }
}
