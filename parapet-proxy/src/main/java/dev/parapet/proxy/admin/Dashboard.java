package dev.parapet.proxy.admin;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parapet.core.breaker.BreakerSnapshot;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.server.ProxyServer;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * The live dashboard of the admin listener: {@code GET /dashboard} is one self-contained page
 * (HTML, its script and canvas charts drawn by that script; nothing fetched from elsewhere), which
 * polls {@code GET /admin/dashboard.json?since=SEQ} every second for the samples it has not seen.
 *
 * <p>A {@link DashboardSampler} reads the metrics and the breakers once a second on the admin
 * listener's event loop (a few hundred meters: well under a millisecond) and keeps the last five
 * minutes, so a page opened late still shows the recent past.
 */
final class Dashboard implements AutoCloseable {
  static final String PAGE_PATH = "/dashboard";
  static final String JSON_PATH = "/admin/dashboard.json";
  private static final String PAGE_RESOURCE = "dashboard.html";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ProxyServer proxy;
  private final Ticker ticker;
  private final DashboardSampler sampler;
  private final byte[] page;
  private @Nullable ScheduledFuture<?> task;

  Dashboard(ProxyServer proxy, Ticker ticker) {
    this.proxy = proxy;
    this.ticker = ticker;
    this.sampler = new DashboardSampler(proxy.metrics().registry(), () -> proxy.breakers().all());
    this.page = readPage();
  }

  /** Starts sampling once a second on {@code loop}. */
  void start(EventExecutor loop) {
    task = loop.scheduleAtFixedRate(this::sampleQuietly, 0, 1, TimeUnit.SECONDS);
  }

  private void sampleQuietly() {
    try {
      sampler.sample(System.currentTimeMillis(), ticker.read());
    } catch (RuntimeException e) {
      // A failed sample leaves a gap in the charts; the next one tries again.
      LoggerFactory.getLogger("parapet.admin").warn("dashboard sample failed", e);
    }
  }

  byte[] page() {
    return page;
  }

  /** The samples after {@code since} (0 for all kept) and every breaker's snapshot now. */
  ObjectNode json(long since) {
    ObjectNode root = JSON.createObjectNode();
    root.put("interval_ms", 1000);
    root.put("state", state(proxy));
    root.put("capacity", DashboardSampler.CAPACITY);
    ArrayNode groups = root.putArray("groups");
    DashboardSampler.GROUPS.forEach(groups::add);
    ArrayNode samples = root.putArray("samples");
    long last = since;
    for (DashboardSampler.Sample s : sampler.since(since)) {
      last = s.seq();
      ObjectNode n = samples.addObject();
      n.put("seq", s.seq());
      n.put("t", s.epochMillis());
      n.put("seconds", s.seconds());
      ObjectNode req = n.putObject("requests");
      s.requests().forEach(req::put);
      n.put("attempts", s.attempts());
      n.put("attempts_failed", s.attemptsFailed());
      putNullable(n, "p50_ms", s.p50Millis());
      putNullable(n, "p99_ms", s.p99Millis());
      putNullable(n, "limit", s.limit());
      putNullable(n, "inflight", s.inflight());
      putNullable(n, "queue", s.queue());
      Map<String, Double> shed = s.shedByPriority();
      if (shed == null) {
        n.putNull("shed_by_priority");
      } else {
        ObjectNode sp = n.putObject("shed_by_priority");
        shed.forEach(sp::put);
      }
      ObjectNode br = n.putObject("breakers");
      s.breakers().forEach(br::put);
    }
    root.put("seq", last);
    ArrayNode breakers = root.putArray("breakers");
    long now = ticker.read();
    for (CircuitBreaker b : proxy.breakers().all()) {
      BreakerSnapshot s = b.snapshot(now);
      ObjectNode n = breakers.addObject();
      n.put("key", s.key().toString());
      n.put("state", s.state().name());
      n.put("mode", s.mode().name().toLowerCase(Locale.ROOT));
      n.put("calls", s.calls());
      n.put("failure_rate", s.failureRate());
      n.put("slow_rate", s.slowRate());
      n.put("open_remaining_ms", s.openRemainingNanos() / 1_000_000);
      n.put("rejected", s.rejected());
      n.put("shadow_rejected", s.shadowRejected());
      n.put("transitions", s.transitions());
    }
    return root;
  }

  /**
   * What the listener does with new work: {@code draining} once a stop began, {@code overloaded}
   * while the overload manager stops accepting, {@code serving} otherwise.
   */
  static String state(ProxyServer proxy) {
    if (proxy.draining()) {
      return "draining";
    }
    return proxy.overload().stopAccepting() ? "overloaded" : "serving";
  }

  /** Reads {@code since=N} from a query string; 0 when absent or not a number. */
  static long since(String uri) {
    int q = uri.indexOf('?');
    if (q < 0) {
      return 0;
    }
    for (String part : uri.substring(q + 1).split("&")) {
      if (part.startsWith("since=")) {
        try {
          return Math.max(0, Long.parseLong(part.substring(6)));
        } catch (NumberFormatException e) {
          return 0;
        }
      }
    }
    return 0;
  }

  private static void putNullable(ObjectNode n, String field, @Nullable Double v) {
    if (v == null) {
      n.putNull(field);
    } else {
      n.put(field, v);
    }
  }

  private static byte[] readPage() {
    try (InputStream in = Dashboard.class.getResourceAsStream(PAGE_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(
            "dashboard : resource " + PAGE_RESOURCE + " missing (expected: in the jar)");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    ScheduledFuture<?> t = task;
    if (t != null) {
      t.cancel(false);
    }
  }
}
