package dev.parapet.proxy.flow;

import dev.parapet.proxy.cache.CachingDownstream;
import io.netty.handler.codec.http.HttpHeaders;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * OpenTelemetry tracing of the request path: a SERVER span per request ({@code parapet.request})
 * and a CLIENT span per origin attempt ({@code parapet.attempt}, retries and hedges included), W3C
 * {@code traceparent} / {@code tracestate} read from the request and written on each attempt, so a
 * trace follows one request across tiers. Exported over OTLP/HTTP when configured; off by default,
 * and then {@link #enabled()} is false and the request path makes no tracing call at all.
 *
 * <p>Trust: a trusted peer's {@code traceparent} is the parent (its sampling decision is kept, as
 * W3C asks); an untrusted client's is ignored — a new trace starts here, sampled at this proxy's
 * ratio — so a client cannot force every request of its own into the traces. Either way the
 * attempt's context replaces the field on the way to the origin. With tracing off, the fields pass
 * through unchanged.
 */
public final class Tracing implements AutoCloseable {
  /** No tracing. */
  public static final Tracing OFF = new Tracing(null, null);

  static final AttributeKey<String> ROUTE = AttributeKey.stringKey("parapet.route");
  static final AttributeKey<String> REQUEST_ID = AttributeKey.stringKey("parapet.request_id");
  static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  static final AttributeKey<String> TARGET = AttributeKey.stringKey("url.path");
  static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
  static final AttributeKey<String> ERROR = AttributeKey.stringKey("error.type");
  static final AttributeKey<String> ORIGIN = AttributeKey.stringKey("parapet.origin");
  static final AttributeKey<String> HOST = AttributeKey.stringKey("server.address");
  static final AttributeKey<String> BREAKER = AttributeKey.stringKey("parapet.breaker_state");
  static final AttributeKey<String> KIND = AttributeKey.stringKey("parapet.attempt");
  static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("parapet.outcome");
  static final AttributeKey<String> CACHE = AttributeKey.stringKey("parapet.cache");

  private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
  private static final TextMapGetter<HttpHeaders> GET =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(HttpHeaders carrier) {
          return List.of("traceparent", "tracestate");
        }

        @Override
        public @Nullable String get(@Nullable HttpHeaders carrier, String key) {
          return carrier == null ? null : carrier.get(key);
        }
      };
  private static final TextMapSetter<HttpHeaders> SET =
      (carrier, key, value) -> {
        if (carrier != null) {
          carrier.set(key, value);
        }
      };

  private final @Nullable Tracer tracer;
  private final @Nullable SdkTracerProvider provider;

  private Tracing(@Nullable Tracer tracer, @Nullable SdkTracerProvider provider) {
    this.tracer = tracer;
    this.provider = provider;
  }

  /**
   * Spans exported over OTLP/HTTP to {@code endpoint} in batches (the exporter's own thread; a
   * collector that falls behind loses spans, never requests).
   *
   * @param ratio share of new traces sampled, in [0, 1]
   */
  public static Tracing otlp(String endpoint, double ratio, String serviceName) {
    SdkTracerProvider provider =
        SdkTracerProvider.builder()
            .setResource(
                Resource.getDefault()
                    .merge(Resource.builder().put("service.name", serviceName).build()))
            .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(ratio)))
            .addSpanProcessor(
                BatchSpanProcessor.builder(
                        OtlpHttpSpanExporter.builder().setEndpoint(endpoint).build())
                    .build())
            .build();
    return of(provider);
  }

  /** Spans from {@code provider} (tests give one with an in-memory exporter). */
  public static Tracing of(SdkTracerProvider provider) {
    return new Tracing(provider.get("dev.parapet.proxy"), provider);
  }

  public boolean enabled() {
    return tracer != null;
  }

  /**
   * Starts a request's span, the parent being a trusted peer's {@code traceparent}; null when
   * tracing is off.
   */
  @Nullable Span startRequest(
      HttpHeaders in, boolean trustedPeer, String method, String path, String requestId) {
    Tracer t = tracer;
    if (t == null) {
      return null;
    }
    Context parent = trustedPeer ? W3C.extract(Context.root(), in, GET) : Context.root();
    return t.spanBuilder("parapet.request")
        .setParent(parent)
        .setSpanKind(SpanKind.SERVER)
        .setAttribute(METHOD, method)
        .setAttribute(TARGET, path)
        .setAttribute(REQUEST_ID, requestId)
        .startSpan();
  }

  /** Starts an attempt's span under the request's; null when tracing is off or no request span. */
  @Nullable Span startAttempt(
      @Nullable Span request, String kind, String origin, String host, String breakerState) {
    Tracer t = tracer;
    if (t == null || request == null) {
      return null;
    }
    return t.spanBuilder("parapet.attempt")
        .setParent(Context.root().with(request))
        .setSpanKind(SpanKind.CLIENT)
        .setAttribute(KIND, kind)
        .setAttribute(ORIGIN, origin)
        .setAttribute(HOST, host)
        .setAttribute(BREAKER, breakerState)
        .startSpan();
  }

  /** Writes {@code span}'s context as {@code traceparent} / {@code tracestate} into {@code out}. */
  static void inject(Span span, HttpHeaders out) {
    out.remove("tracestate");
    W3C.inject(Context.root().with(span), out, SET);
  }

  /** Ends a request span with what the client got (a status of 499: the client left). */
  /**
   * Ends a request's span with what the client got: the cache's own answer when its decorator
   * replaced the proxy's (a stale copy for an error), and what the cache did ({@code hit}, …).
   */
  static void endRequest(
      Span span,
      @Nullable String route,
      int proxyStatus,
      @Nullable String proxyError,
      @Nullable CachingDownstream cache) {
    int answered = cache == null ? 0 : cache.answeredStatus();
    int status = answered != 0 ? answered : proxyStatus;
    @Nullable String error = answered != 0 && answered < 400 ? null : proxyError;
    if (route != null) {
      span.setAttribute(ROUTE, route);
    }
    @Nullable String outcome = cache == null ? null : cache.outcome();
    if (outcome != null) {
      span.setAttribute(CACHE, outcome);
    }
    span.setAttribute(STATUS, (long) status);
    if (error != null) {
      span.setAttribute(ERROR, error);
      span.setStatus(StatusCode.ERROR);
    } else if (status >= 500) {
      span.setStatus(StatusCode.ERROR);
    }
    span.end();
  }

  @Override
  public void close() {
    SdkTracerProvider p = provider;
    if (p != null) {
      p.shutdown().join(5, TimeUnit.SECONDS);
    }
  }
}
