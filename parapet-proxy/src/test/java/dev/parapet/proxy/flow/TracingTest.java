package dev.parapet.proxy.flow;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.cache.Heuristic;
import dev.parapet.proxy.cache.StaleTrigger;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.testing.ProxyFixture;
import dev.parapet.proxy.testing.RawOrigin;
import dev.parapet.proxy.testing.TestOrigin;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** W3C trace context across the proxy, and a span per request and per origin attempt. */
class TracingTest {
  private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String PARENT = "00f067aa0ba902b7";
  private static final String TRACEPARENT = "00-" + TRACE + "-" + PARENT + "-01";

  @RegisterExtension final ProxyFixture fx = new ProxyFixture();
  private final Collected spans = new Collected();

  /** Keeps what was exported, also after the proxy shuts its tracer provider down. */
  static final class Collected implements SpanExporter {
    private final List<SpanData> finished = new CopyOnWriteArrayList<>();

    List<SpanData> getFinishedSpanItems() {
      return finished;
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      finished.addAll(batch);
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }

  private Tracing tracing(Sampler sampler) {
    return Tracing.of(
        SdkTracerProvider.builder()
            .setSampler(sampler)
            .addSpanProcessor(SimpleSpanProcessor.create(spans))
            .build());
  }

  private ProxyServer proxy(TestOrigin origin, Tracing tracing, boolean trusting) throws Exception {
    ProxyFixture.ProxySpec spec =
        fx.proxy()
            .routes(new Route("/api/", null, "/api/", "api", Duration.ofSeconds(5)))
            .origins(ProxyFixture.pool("api", origin.address()).build())
            .tracing(tracing);
    return (trusting ? spec.trustingLoopback() : spec).start();
  }

  private static String header(Map<String, List<String>> headers, String name) {
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name)) {
        return e.getValue().get(0);
      }
    }
    throw new AssertionError("no " + name + " in " + headers);
  }

  private SpanData named(String name) {
    return spans.getFinishedSpanItems().stream()
        .filter(s -> s.getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void aTrustedPeersTraceContinuesThroughARequestSpanAndAnAttemptSpan() throws Exception {
    TestOrigin origin = fx.testOrigin();
    ProxyServer p = proxy(origin, tracing(Sampler.parentBased(Sampler.alwaysOff())), true);
    fx.get(p.port(), "/api/a", "traceparent", TRACEPARENT);
    fx.closeNow(p);

    SpanData request = named("parapet.request");
    SpanData attempt = named("parapet.attempt");
    assertThat(request.getTraceId()).isEqualTo(TRACE);
    assertThat(request.getParentSpanId()).isEqualTo(PARENT);
    assertThat(request.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(request.getAttributes().get(Tracing.ROUTE)).isEqualTo("/api/");
    assertThat(request.getAttributes().get(Tracing.STATUS)).isEqualTo(200L);
    assertThat(request.getAttributes().get(Tracing.REQUEST_ID))
        .isEqualTo(header(origin.seenHeaders.get(0), "X-Request-Id"));
    assertThat(attempt.getParentSpanId()).isEqualTo(request.getSpanId());
    assertThat(attempt.getKind()).isEqualTo(SpanKind.CLIENT);
    assertThat(attempt.getAttributes().get(Tracing.ORIGIN)).isEqualTo("api");
    assertThat(attempt.getAttributes().get(Tracing.KIND)).isEqualTo("first");
    assertThat(attempt.getAttributes().get(Tracing.BREAKER)).isEqualTo("CLOSED");
    assertThat(attempt.getAttributes().get(Tracing.OUTCOME)).isEqualTo("SUCCESS");
    assertThat(attempt.getAttributes().get(Tracing.STATUS)).isEqualTo(200L);
    // The origin sees the attempt as its parent, in the peer's trace, sampled as the peer said.
    assertThat(header(origin.seenHeaders.get(0), "traceparent"))
        .isEqualTo("00-" + TRACE + "-" + attempt.getSpanId() + "-01");
  }

  /** The request span says what the cache did: a miss stored, then a hit. */
  @Test
  void theRequestSpanCarriesTheCacheStatus() throws Exception {
    RawOrigin origin =
        fx.closeLater(
            RawOrigin.answering(
                "HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nContent-Length: 5\r\n\r\nhello"));
    EdgeCache cache =
        new EdgeCache(
            ProxyFixture.NAME,
            new EdgeCache.Settings(
                64L * 1024 * 1024,
                Duration.ofSeconds(300),
                Duration.ZERO,
                StaleTrigger.UNREACHABLE,
                new Heuristic(0, 0.10, Duration.ofHours(24).toNanos())),
            Runnable::run,
            System::currentTimeMillis,
            Map.of("/api/", EdgeCache.RouteRules.DEFAULTS));
    ProxyServer p =
        fx.proxy()
            .routes(new Route("/api/", null, "/api/", "api", Duration.ofSeconds(5)))
            .origins(ProxyFixture.pool("api", origin.address()).build())
            .cache(cache)
            .tracing(tracing(Sampler.alwaysOn()))
            .start();
    assertThat(fx.get(p.port(), "/api/cached").statusCode()).isEqualTo(200);
    assertThat(fx.get(p.port(), "/api/cached").statusCode()).isEqualTo(200);
    fx.closeNow(p);

    List<String> statuses =
        spans.getFinishedSpanItems().stream()
            .filter(s -> s.getName().equals("parapet.request"))
            .map(s -> s.getAttributes().get(Tracing.CACHE))
            .toList();
    assertThat(statuses).containsExactly("miss", "hit");
  }

  @Test
  void anUntrustedClientsTraceContextIsNotBelieved() throws Exception {
    TestOrigin origin = fx.testOrigin();
    ProxyServer p = proxy(origin, tracing(Sampler.parentBased(Sampler.alwaysOn())), false);
    fx.get(p.port(), "/api/a", "traceparent", TRACEPARENT);
    fx.closeNow(p);

    SpanData request = named("parapet.request");
    assertThat(request.getTraceId()).isNotEqualTo(TRACE);
    assertThat(request.getParentSpanContext().isValid()).isFalse();
    assertThat(header(origin.seenHeaders.get(0), "traceparent"))
        .startsWith("00-" + request.getTraceId() + "-");
  }

  @Test
  void withTracingOffTheFieldsPassThroughAndNothingIsRecorded() throws Exception {
    TestOrigin origin = fx.testOrigin();
    ProxyServer p = proxy(origin, Tracing.OFF, true);
    fx.get(p.port(), "/api/a", "traceparent", TRACEPARENT, "tracestate", "v=1");
    fx.closeNow(p);

    assertThat(header(origin.seenHeaders.get(0), "traceparent")).isEqualTo(TRACEPARENT);
    assertThat(header(origin.seenHeaders.get(0), "tracestate")).isEqualTo("v=1");
    assertThat(spans.getFinishedSpanItems()).isEmpty();
  }
}
