package dev.parapet.proxy.cache;

import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.http.LocalResponses;
import dev.parapet.proxy.metrics.ProxyMetrics;
import java.util.function.BooleanSupplier;

/**
 * What the cache's per-request decorators share under one configuration of a listener: the edge
 * cache itself, the builder of local answers, the metrics, the clock, and whether an incident
 * prefers stale copies.
 *
 * @param preferStale true while an incident is declared (serve stale rather than ask the origin)
 */
public record CacheServices(
    EdgeCache edge,
    LocalResponses responses,
    ProxyMetrics metrics,
    Ticker ticker,
    BooleanSupplier preferStale) {

  /** Counts {@code s} in the cache's own counters and in the metrics. */
  public void count(EdgeCache.Status s) {
    edge.count(s);
    metrics.cache(s.label());
  }

  /** A {@code Cache-Status} member of this cache. */
  CacheStatus status() {
    return CacheStatus.of(edge.name());
  }
}
